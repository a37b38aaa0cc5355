import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { PluginManifest } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { LOGGER, Logger } from '@crawler/logging';
import { STATE_STORE, StateStore } from '@crawler/state';
import { pathExtension } from '@crawler/url';

/** The state-store namespace of the registry: one hash `manifests`, plugin name → manifest JSON. */
export const PLUGINS_NAMESPACE = 'plugins';
/** A loaded set of manifests is read again this often (a redeployed plugin may claim more). */
const REFRESH_MS = 10_000;
/** While an enabled plugin has not registered, the registry looks again this often. */
const POLL_MS = 200;

/**
 * What the enabled plugins claim, compiled for the hot paths of the core services. Plugins are consulted in
 * the order of `PLUGINS`: the first that claims something gets it (an ordered, explicit chain).
 */
export interface PluginClaims {
  /** The manifests of the enabled plugins, in `PLUGINS` order. */
  readonly manifests: readonly PluginManifest[];
  /** No plugin claims any URL or content type (a page-hook-only set, or none at all). */
  readonly fetchesNothing: boolean;
  /** URL extensions claimed by some plugin (for the URL filter's extension rule). */
  readonly extensions: ReadonlySet<string>;
  /** The plugin that claims this URL by extension or path pattern, if any. */
  claimsUrl(url: URL | string): PluginManifest | undefined;
  /** The plugin that claims a response of this Content-Type (parameters ignored), if any. */
  forContentType(contentType: string): PluginManifest | undefined;
  /** The plugins that want every new parsed page. */
  readonly pageHooks: readonly PluginManifest[];
  /** Some plugin wants links to carry the page they were found on (PluginManifest.referrers). */
  readonly referrers: boolean;
  /**
   * The plugin that takes this fetched HTML page before the parser (`claims.pages`), if any. `render`, the site's
   * setting: `false` keeps the page from the render plugin, `true` gives it to the render plugin (when enabled)
   * whatever the paths it claims; absent, the plugins' claims decide.
   */
  claimsPage(url: string, render?: boolean): PluginManifest | undefined;
}

/** The plugin a site's `render` setting names. */
export const RENDER_PLUGIN = 'render';

/** The manifests compiled into lookups. Pure: unit-tested on its own. */
export function compilePluginClaims(manifests: readonly PluginManifest[]): PluginClaims {
  const byExtension = new Map<string, PluginManifest>();
  const exactTypes = new Map<string, PluginManifest>();
  const typeRanges: [string, PluginManifest][] = [];
  const patterns: [RegExp, PluginManifest][] = [];
  const pagePatterns: [RegExp, PluginManifest][] = [];
  for (const manifest of manifests) {
    for (const pattern of manifest.claims.pages ?? []) pagePatterns.push([globToRegExp(pattern), manifest]);
    for (const ext of manifest.claims.extensions) if (!byExtension.has(ext)) byExtension.set(ext, manifest);
    for (const type of manifest.claims.contentTypes) {
      if (type.endsWith('/*')) typeRanges.push([type.slice(0, -1), manifest]);
      else if (!exactTypes.has(type)) exactTypes.set(type, manifest);
    }
    for (const pattern of manifest.claims.urlPatterns) patterns.push([globToRegExp(pattern), manifest]);
  }
  const renderer = manifests.find((m) => m.name === RENDER_PLUGIN);
  const fetchesNothing = byExtension.size === 0 && exactTypes.size === 0 && typeRanges.length === 0 && patterns.length === 0;
  return {
    manifests,
    fetchesNothing,
    extensions: new Set(byExtension.keys()),
    pageHooks: manifests.filter((m) => m.pageHook),
    referrers: manifests.some((m) => m.referrers === true),
    claimsPage(input, render) {
      if (render === true && renderer) return renderer;
      if (pagePatterns.length === 0) return undefined;
      let path: string;
      try {
        path = new URL(input).pathname;
      } catch {
        return undefined;
      }
      return pagePatterns.find(([re, m]) => re.test(path) && !(render === false && m.name === RENDER_PLUGIN))?.[1];
    },
    claimsUrl(input) {
      if (fetchesNothing) return undefined;
      let url: URL;
      try {
        url = typeof input === 'string' ? new URL(input) : input;
      } catch {
        return undefined;
      }
      const ext = pathExtension(url);
      const byExt = ext === null ? undefined : byExtension.get(ext);
      if (byExt) return byExt;
      return patterns.find(([re]) => re.test(url.pathname))?.[1];
    },
    forContentType(contentType) {
      if (fetchesNothing) return undefined;
      const type = contentType.split(';')[0].trim().toLowerCase();
      if (!type) return undefined;
      return exactTypes.get(type) ?? typeRanges.find(([prefix]) => type.startsWith(prefix))?.[1];
    },
  };
}

const NO_CLAIMS = compilePluginClaims([]);

/** `/a/*.png` → a RegExp on the path: `*` within one segment, `**` across segments, the rest literal. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (glob[i] === '*') source += '[^/]*';
    else source += glob[i].replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

export class PluginUnavailableError extends Error {
  constructor(
    readonly missing: string[],
    waitedMs: number,
  ) {
    super(
      `PLUGINS enables ${missing.map((n) => `"${n}"`).join(', ')}, which did not register within ${waitedMs} ms: ` +
        `start ${missing.map((n) => `plugin-${n}`).join(', ')} (or remove ${missing.length > 1 ? 'them' : 'it'} from PLUGINS)`,
    );
    this.name = 'PluginUnavailableError';
  }
}

/**
 * The plugin registry: how core services learn about plugins without importing one. A plugin registers its
 * manifest in the shared state store when it boots (its own service, or the embedded crawl that loaded it);
 * a core service reads the manifests of the plugins that `PLUGINS` names, waits for those not registered
 * yet (up to PLUGINS_WAIT_MS, then the job that needed them fails and is retried), and keeps them for
 * a few seconds. With no plugin enabled nothing is read at all: the core runs exactly as without plugins.
 */
@Injectable()
export class PluginRegistry implements BeforeApplicationShutdown {
  private readonly store: StateStore;
  private readonly enabledNames: readonly string[];
  private cached?: { claims: PluginClaims; at: number };
  private loading?: Promise<PluginClaims>;
  private stopped = false;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.store = state.namespace(PLUGINS_NAMESPACE);
    this.enabledNames = config.plugins?.enabled ?? [];
  }

  /** The plugins `PLUGINS` enables, in order. */
  get enabled(): readonly string[] {
    return this.enabledNames;
  }

  /** Publishes a plugin's manifest (validated) for every service to read. Idempotent. */
  async register(manifest: PluginManifest): Promise<void> {
    const valid = PluginManifest.parse(manifest);
    await this.store.hashSet('manifests', valid.name, JSON.stringify(valid));
    this.cached = undefined;
  }

  /** Every registered manifest, enabled or not (for status pages and tests). */
  async registered(): Promise<PluginManifest[]> {
    const raw = await this.store.hashGetAll('manifests');
    return Object.values(raw).flatMap((json) => {
      const parsed = PluginManifest.safeParse(safeJson(json));
      return parsed.success ? [parsed.data] : [];
    });
  }

  /** What the enabled plugins claim; waits for those not registered yet (see the class comment). */
  async claims(): Promise<PluginClaims> {
    if (this.enabledNames.length === 0) return NO_CLAIMS;
    const cached = this.cached;
    if (cached && Date.now() - cached.at < REFRESH_MS) return cached.claims;
    if (cached) {
      // Stale: answer with what is known and read again in the background.
      this.loading ??= this.load().finally(() => (this.loading = undefined));
      this.loading.catch(() => undefined);
      return cached.claims;
    }
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  beforeApplicationShutdown() {
    this.stopped = true;
  }

  private async load(): Promise<PluginClaims> {
    const started = Date.now();
    const waitMs = this.config.plugins.waitMs;
    let warned = false;
    for (;;) {
      const raw = await this.store.hashGetAll('manifests');
      const manifests: PluginManifest[] = [];
      const missing: string[] = [];
      for (const name of this.enabledNames) {
        const parsed = raw[name] === undefined ? undefined : PluginManifest.safeParse(safeJson(raw[name]));
        if (parsed?.success && parsed.data.name === name) manifests.push(parsed.data);
        else {
          if (parsed && !warned) this.logger?.error({ event: 'plugin-manifest-invalid', plugin: name }, `plugin ${name} registered an invalid manifest`);
          missing.push(name);
        }
      }
      if (missing.length === 0) {
        const claims = compilePluginClaims(manifests);
        this.cached = { claims, at: Date.now() };
        if (warned) this.logger?.info({ event: 'plugins-registered', plugins: this.enabledNames }, 'every enabled plugin has registered');
        return claims;
      }
      const waited = Date.now() - started;
      if (this.stopped || waited >= waitMs) {
        const error = new PluginUnavailableError(missing, waited);
        this.logger?.error({ event: 'plugins-missing', missing }, error.message);
        throw error;
      }
      if (!warned) {
        warned = true;
        this.logger?.warn({ event: 'plugins-waiting', missing }, `waiting for plugin ${missing.join(', ')} to register`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, waitMs - waited)));
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
