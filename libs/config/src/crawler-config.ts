import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { contentParserSettings } from '@crawler/content-parser/settings';
import { contentSeenSettings } from '@crawler/content-seen/settings';
import { controlPlaneSettings } from '@crawler/control-plane/settings';
import { dnsSettings } from '@crawler/dns-resolver/settings';
import { downloaderSettings, sitemapsSettings } from '@crawler/downloader/settings';
import { frontierSettings } from '@crawler/frontier/settings';
import { pluginsSettings } from '@crawler/plugin-host/settings';
import { envNames, settingFields } from '@crawler/settings';
import { parseSiteSettingsFile, resolveSiteSettings, SiteRule, SiteSettingsFileError } from '@crawler/site-settings';
import { urlExtractorSettings } from '@crawler/url-extractor/settings';
import { urlFilterSettings } from '@crawler/url-filter/settings';
import { urlSeenSettings } from '@crawler/url-seen/settings';
import { crawlSettings, httpSettings, processSettings, sitesSettings } from './process.settings';
import { storageSettings, storesSettings } from './stores.settings';

/**
 * Every setting of every service, validated at boot: each library declares its own (`src/<lib>.settings.ts`),
 * the shared infrastructure's are this library's. Each field names the environment variable it is read from
 * (`.meta({ env })`: shared infrastructure plain names, service knobs the service's prefix), and its doc comment
 * is its row in docs/configuration.md, in the order assembled here.
 */
export const CrawlerConfigSchema = z.object({
  ...storesSettings.shape,
  ...httpSettings.shape,
  controlPlane: controlPlaneSettings,
  sites: sitesSettings,
  crawl: crawlSettings,
  ...processSettings.shape,
  frontier: frontierSettings,
  dns: dnsSettings,
  downloader: downloaderSettings,
  parser: contentParserSettings,
  extractor: urlExtractorSettings,
  filter: urlFilterSettings,
  seen: urlSeenSettings,
  contentSeen: contentSeenSettings,
  storage: storageSettings,
  plugins: pluginsSettings,
  sitemaps: sitemapsSettings,
});

export type CrawlerConfig = z.infer<typeof CrawlerConfigSchema> & {
  /** SITE_SETTINGS_FILE's rules, in file order, read and checked at start (absent: no file). */
  siteRules?: readonly SiteRule[];
};

/** Config path → the variable it is read from and how, as the schema's fields declare them. */
const FIELDS = settingFields(CrawlerConfigSchema);

/** Environment variable → config path. */
export const ENV_NAMES: Record<string, string> = envNames(CrawlerConfigSchema);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses `NAME=IP` pairs (comma or whitespace separated). */
export function parseHostPairs(text: string): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const pair of text.split(/[\s,]+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ConfigError([`"${pair}" is not NAME=IP`]);
    hosts[pair.slice(0, eq).toLowerCase()] = pair.slice(eq + 1);
  }
  return hosts;
}

/**
 * Parses the hosts(5) format: "IP name [aliases…]" lines, '#' comments. A name on several lines takes the
 * first line's address, as the system's resolver (glibc) answers from the first line that names it.
 */
export function parseHostsFile(text: string): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const [ip, ...names] = raw.replace(/#.*/, '').trim().split(/\s+/);
    for (const name of ip ? names : []) {
      const key = name.toLowerCase();
      if (!Object.hasOwn(hosts, key)) hosts[key] = ip;
    }
  }
  return hosts;
}

/** The settings as read, before validation: nested plain objects with leaves of any value. */
interface SettingsTree {
  [key: string]: unknown;
}

function setPath(target: SettingsTree, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as SettingsTree;
  node[parts[parts.length - 1]] = value;
}

function envValue(path: string, raw: string): unknown {
  switch (FIELDS[path].read) {
    case 'pairs':
      return parseHostPairs(raw);
    case 'lines':
      return raw
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
    default:
      return raw;
  }
}

/** The settings' groups (`frontier`, `downloader`…), as opposed to the top-level settings. */
const GROUPS = Object.entries(CrawlerConfigSchema.shape).flatMap(([key, field]) => (field instanceof z.ZodObject ? [key] : []));

/** Dot-path → env name, so an error names the variable the operator set. */
const PATH_TO_ENV = Object.fromEntries(Object.entries(ENV_NAMES).map(([env, path]) => [path, env]));

/**
 * Builds the configuration from the environment, then `overrides` (CLI flags) on top. A bad value throws a
 * ConfigError naming the variable, the value and what is allowed.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, unknown> = {}): CrawlerConfig {
  // Every group present, so that a group none of whose variables is set still gets its defaults.
  const input: SettingsTree = Object.fromEntries(GROUPS.map((group) => [group, {}]));
  const problems: string[] = [];
  for (const [name, path] of Object.entries(ENV_NAMES)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    try {
      setPath(input, path, envValue(path, raw));
    } catch (error) {
      problems.push(`${name}: ${(error as Error).message}`);
    }
  }
  for (const [path, value] of Object.entries(overrides)) if (value !== undefined) setPath(input, path, value);
  const result = CrawlerConfigSchema.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const keys = issue.path.map(String);
      // The setting is the longest known prefix of the issue's path (dns.hosts.<name> belongs to DNS_HOSTS).
      let depth = keys.length;
      while (depth > 1 && !PATH_TO_ENV[keys.slice(0, depth).join('.')]) depth--;
      const name = PATH_TO_ENV[keys.slice(0, depth).join('.')] ?? keys.join('.');
      const secret = FIELDS[keys.slice(0, depth).join('.')]?.secret === true;
      const got = secret ? '(hidden)' : keys.reduce<unknown>((node, key) => (node as SettingsTree | undefined)?.[key], input);
      const where = depth < keys.length ? ` at ${keys.slice(depth).join('.')}` : '';
      problems.push(`${name}${where}: ${issue.message} (got ${JSON.stringify(got)})`);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  const config: CrawlerConfig = result.data!;
  if (config.frontier.leaseMs <= config.downloader.totalTimeoutMs) {
    // A lease that can run out while its fetch is still allowed to run would let a second fetch of the host start.
    throw new ConfigError([`FRONTIER_LEASE_MS: must be longer than DOWNLOADER_TOTAL_TIMEOUT_MS (got ${config.frontier.leaseMs} ≤ ${config.downloader.totalTimeoutMs})`]);
  }
  if (config.frontier.batchMemoryMs <= config.queueInfraOutageMaxMs) {
    // A batch retried after an outage would find its id forgotten, and be enqueued a second time.
    throw new ConfigError([
      `FRONTIER_BATCH_MEMORY_MS: must be longer than QUEUE_INFRA_OUTAGE_MAX_MS (got ${config.frontier.batchMemoryMs} ≤ ${config.queueInfraOutageMaxMs})`,
    ]);
  }
  if (config.seen.answerMemoryMs <= config.queueInfraOutageMaxMs) {
    // A batch retried through an outage would find its answer forgotten, its URLs seen, and send none of them.
    throw new ConfigError([
      `URL_SEEN_ANSWER_MEMORY_MS: must be longer than QUEUE_INFRA_OUTAGE_MAX_MS (got ${config.seen.answerMemoryMs} ≤ ${config.queueInfraOutageMaxMs})`,
    ]);
  }
  resolveControlPlaneToken(config);
  if (config.sites.file) config.siteRules = readSiteRules(config);
  if (config.dns.hostsFile) {
    try {
      config.dns.hosts = { ...parseHostsFile(readFileSync(config.dns.hostsFile, 'utf8')), ...config.dns.hosts };
    } catch (error) {
      throw new ConfigError([`DNS_HOSTS_FILE: cannot read ${config.dns.hostsFile}: ${(error as Error).message}`]);
    }
  }
  return config;
}

/**
 * The site's `render` setting for `host` (SITE_SETTINGS_FILE's, a FILE_ONLY field): false = never rendered, true =
 * every HTML page rendered, undefined = the render plugin's own choice. For plugins, which see the site settings
 * only through the configuration.
 */
export function siteRenderSetting(config: Pick<CrawlerConfig, 'siteRules'>, host: string): boolean | undefined {
  return config.siteRules ? resolveSiteSettings(config.siteRules, host).settings.render : undefined;
}

/**
 * SITE_SETTINGS_FILE's rules. A site's delay floor under FRONTIER_MIN_DELAY_MS is refused as an operator's
 * override is (the frontier would hold the floor anyway: said here, not found out later).
 */
function readSiteRules(config: CrawlerConfig): SiteRule[] {
  const file = config.sites.file!;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`SITE_SETTINGS_FILE: cannot read ${file}: ${(error as Error).message}`]);
  }
  try {
    const rules = parseSiteSettingsFile(text, file);
    const { minDelayMs, allowDelayBelowMin } = config.frontier;
    const below = allowDelayBelowMin ? [] : rules.filter((r) => r.settings.minDelayMs !== undefined && r.settings.minDelayMs < minDelayMs);
    if (below.length) {
      throw new SiteSettingsFileError(
        file,
        below.map(
          (r) =>
            `${r.at ?? file}: sites."${r.pattern.text}".minDelayMs: ${r.settings.minDelayMs} ms is below FRONTIER_MIN_DELAY_MS (${minDelayMs} ms); a site may only raise the floor unless FRONTIER_ALLOW_DELAY_BELOW_MIN=true`,
        ),
      );
    }
    // A site that asks for rendering with no renderer would be crawled as fetched: said at start instead.
    const render = config.plugins.enabled.includes('render') ? [] : rules.filter((r) => r.settings.render === true);
    if (render.length) {
      throw new SiteSettingsFileError(
        file,
        render.map((r) => `${r.at ?? file}: sites."${r.pattern.text}".render: true needs the render plugin: add render to PLUGINS, or drop the setting`),
      );
    }
    return rules;
  } catch (error) {
    if (error instanceof SiteSettingsFileError) throw new ConfigError([`SITE_SETTINGS_FILE: ${error.message}`]);
    throw error;
  }
}

/** CONTROL_PLANE_TOKEN_FILE read into the token, and the settings that only make sense with a token. */
function resolveControlPlaneToken(config: CrawlerConfig): void {
  const cp = config.controlPlane;
  if (cp.tokenFile) {
    if (cp.token) throw new ConfigError(['CONTROL_PLANE_TOKEN_FILE: set it or CONTROL_PLANE_TOKEN, not both']);
    let text: string;
    try {
      text = readFileSync(cp.tokenFile, 'utf8').trim();
    } catch (error) {
      throw new ConfigError([`CONTROL_PLANE_TOKEN_FILE: cannot read ${cp.tokenFile}: ${(error as Error).message}`]);
    }
    const checked = CrawlerConfigSchema.shape.controlPlane.shape.token.safeParse(text);
    if (!checked.success) throw new ConfigError([`CONTROL_PLANE_TOKEN_FILE: the token in ${cp.tokenFile} ${checked.error.issues[0].message}`]);
    cp.token = text;
  }
  if (cp.protectReads === true && !cp.token) {
    throw new ConfigError(['CONTROL_PLANE_PROTECT_READS: needs CONTROL_PLANE_TOKEN (or CONTROL_PLANE_TOKEN_FILE): there is no token to protect the reads with']);
  }
}

export const CRAWLER_CONFIG = Symbol('CRAWLER_CONFIG');
