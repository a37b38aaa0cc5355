import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { ConfigError, CrawlerConfig } from '@crawler/config';
import { resolveSiteSettings, SiteProxySetting, SiteRule, SiteTlsSetting } from '@crawler/site-settings';
import type { ProxyRoute } from './proxy-tunnel';

/**
 * How a request reaches its site: through which proxy, with which TLS checks. Requests of one route (one object:
 * FetchRoutes answers the same one for the same settings) share a connection pool.
 */
export interface FetchRoute {
  proxy?: ProxyRoute;
  tls?: TlsRoute;
}

export interface TlsRoute {
  /** Node's bundled CAs and the site's: replaces the default list when set. */
  ca?: string[];
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
}

/** Straight to the site, the default checks: the fetcher's shared pool. */
export const DIRECT: FetchRoute = {};

/** Hosts whose route is remembered at most (routes follow patterns: a crawl of many hosts has few routes). */
const HOSTS_KEPT = 10_000;

/**
 * Every site's route, built at start from DOWNLOADER_PROXY_URL and SITE_SETTINGS_FILE's `proxy` and `tls`: the
 * credentials read from their variables and files, the certificate files read, so that a missing one stops the
 * downloader at start (a ConfigError naming the site and field) instead of failing every request later. Live
 * settings never change a route (FILE_ONLY).
 */
export class FetchRoutes {
  private readonly byHost = new Map<string, FetchRoute>();
  private readonly routes = new Map<string, FetchRoute>();
  private readonly proxyNumbers = new Map<ProxyRoute, number>();

  private constructor(
    private readonly rules: readonly SiteRule[],
    private readonly crawlProxy: ProxyRoute | undefined,
    private readonly proxies: Map<string, ProxyRoute | undefined>,
    private readonly tlsBySetting: Map<string, TlsRoute>,
    /** Sites that skip certificate checks, for the warning at start. */
    readonly insecureSites: string[],
  ) {}

  /** Reads what the routes need; throws a ConfigError listing every problem. */
  static load(config: CrawlerConfig, env: NodeJS.ProcessEnv = process.env, read = (path: string) => readFileSync(path, 'utf8')): FetchRoutes {
    const problems: string[] = [];
    const attempt = <T>(where: string, make: () => T): T | undefined => {
      try {
        return make();
      } catch (error) {
        problems.push(`${where}: ${(error as Error).message}`);
        return undefined;
      }
    };
    const crawlProxy = config.downloader.proxyUrl ? attempt('DOWNLOADER_PROXY_URL', () => crawlProxyRoute(config, read)) : undefined;
    const rules = config.siteRules ?? [];
    const proxies = new Map<string, ProxyRoute | undefined>();
    const tlsBySetting = new Map<string, TlsRoute>();
    const insecureSites: string[] = [];
    for (const { pattern, settings, at } of rules) {
      const where = `SITE_SETTINGS_FILE: ${at ? `${at}: ` : ''}sites."${pattern.text}"`;
      if (settings.proxy !== undefined) {
        const proxy = attempt(`${where}.proxy`, () => siteProxyRoute(settings.proxy!, env, read));
        proxies.set(JSON.stringify(settings.proxy), proxy);
      }
      if (settings.tls) {
        const tls = attempt(`${where}.tls`, () => tlsRoute(settings.tls!, read));
        if (tls) tlsBySetting.set(JSON.stringify(settings.tls), tls);
        if (settings.tls.insecureSkipVerify) insecureSites.push(pattern.text);
      }
    }
    if (problems.length) throw new ConfigError(problems);
    return new FetchRoutes(rules, crawlProxy, proxies, tlsBySetting, insecureSites);
  }

  /** The route of a host (`hostname[:port]`, as the frontier keys hosts). */
  forHost(host: string): FetchRoute {
    let route = this.byHost.get(host);
    if (route) return route;
    const { proxy, tls } = resolveSiteSettings(this.rules, host).settings;
    const proxyRoute = proxy === undefined ? this.crawlProxy : this.proxies.get(JSON.stringify(proxy));
    const tlsRoute = tls ? this.tlsBySetting.get(JSON.stringify(tls)) : undefined;
    // One route per proxy and TLS setting, so that hosts of one site share its pool.
    const key = `${proxyRoute ? this.proxyNumber(proxyRoute) : ''}|${tls ? JSON.stringify(tls) : ''}`;
    route = key === '|' ? DIRECT : this.routes.get(key);
    if (!route) {
      route = { ...(proxyRoute ? { proxy: proxyRoute } : {}), ...(tlsRoute ? { tls: tlsRoute } : {}) };
      this.routes.set(key, route);
    }
    if (this.byHost.size >= HOSTS_KEPT) this.byHost.clear();
    this.byHost.set(host, route);
    return route;
  }

  private proxyNumber(proxy: ProxyRoute): number {
    let number = this.proxyNumbers.get(proxy);
    if (number === undefined) this.proxyNumbers.set(proxy, (number = this.proxyNumbers.size));
    return number;
  }

  /** The route of a URL's host. */
  forUrl(url: string): FetchRoute {
    return this.forHost(new URL(url).host);
  }

  /** The crawl's own proxy, as shown in logs (no credentials). */
  get crawlProxyShown(): string | undefined {
    return this.crawlProxy?.shown;
  }
}

/** The warning every downloader logs at start for the sites whose certificates it does not check. */
export function insecureWarning(sites: readonly string[]): string {
  const names = sites.map((site) => `"${site}"`).join(', ');
  return `TLS CERTIFICATES ARE NOT CHECKED for ${names} (SITE_SETTINGS_FILE tls.insecureSkipVerify): anyone between the crawler and ${sites.length > 1 ? 'these sites' : 'this site'} can read and change what it fetches there`;
}

/** What is wrong with the routes, for a service's start checks (it then exits 2 naming it), or undefined. */
export async function checkFetchRoutes(config: CrawlerConfig): Promise<Error | undefined> {
  try {
    FetchRoutes.load(config);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

/** DOWNLOADER_PROXY_URL, its credentials from the URL or DOWNLOADER_PROXY_CREDENTIALS_FILE. */
function crawlProxyRoute(config: CrawlerConfig, read: (path: string) => string): ProxyRoute {
  const url = new URL(config.downloader.proxyUrl!);
  const file = config.downloader.proxyCredentialsFile;
  if (file && (url.username || url.password)) throw new Error('credentials in the URL and in DOWNLOADER_PROXY_CREDENTIALS_FILE: keep one');
  const credentials = file
    ? credentialsFrom(() => read(file), `DOWNLOADER_PROXY_CREDENTIALS_FILE ${file}`)
    : url.username
      ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
      : undefined;
  return proxyRoute(url, credentials);
}

/** A site's `proxy`: undefined for `none`. */
function siteProxyRoute(setting: SiteProxySetting, env: NodeJS.ProcessEnv, read: (path: string) => string): ProxyRoute | undefined {
  if (setting === 'none') return undefined;
  if (typeof setting === 'string') return proxyRoute(new URL(setting), undefined);
  const { url, credentialsEnv, credentialsFile } = setting;
  const credentials = credentialsEnv
    ? credentialsFrom(() => {
        const value = env[credentialsEnv];
        if (value === undefined || value === '') throw new Error('is not set');
        return value;
      }, `variable ${credentialsEnv}`)
    : credentialsFile
      ? credentialsFrom(() => read(credentialsFile), `file ${credentialsFile}`)
      : undefined;
  return proxyRoute(new URL(url), credentials);
}

function proxyRoute(url: URL, credentials: string | undefined): ProxyRoute {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 80);
  return {
    host,
    port,
    shown: `http://${url.host}`,
    ...(credentials ? { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } : {}),
  };
}

/** `user:password` from where the setting says; the message names the place, never what it holds. */
function credentialsFrom(get: () => string, place: string): string {
  let text: string;
  try {
    text = get().trim();
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`cannot read the proxy credentials: ${place} ${reason}`);
  }
  if (!/^[^:\r\n]+:[^\r\n]*$/.test(text)) throw new Error(`the proxy credentials in ${place} are not user:password on one line`);
  return text;
}

function tlsRoute(setting: SiteTlsSetting, read: (path: string) => string): TlsRoute {
  const file = (field: string, path: string) => {
    try {
      return read(path);
    } catch (error) {
      throw new Error(`${field}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const pem = (field: string, path: string, what: 'CERTIFICATE' | 'PRIVATE KEY') => {
    const text = file(field, path);
    if (!new RegExp(`-----BEGIN [A-Z ]*${what}-----`).test(text)) throw new Error(`${field}: ${path} holds no PEM ${what.toLowerCase()}`);
    if (/-----BEGIN ENCRYPTED/.test(text)) throw new Error(`${field}: ${path} is encrypted; give the key unencrypted (as a mounted secret)`);
    return text;
  };
  return {
    rejectUnauthorized: setting.insecureSkipVerify !== true,
    ...(setting.caFile ? { ca: [...rootCertificates, pem('caFile', setting.caFile, 'CERTIFICATE')] } : {}),
    ...(setting.clientCertFile ? { cert: pem('clientCertFile', setting.clientCertFile, 'CERTIFICATE') } : {}),
    ...(setting.clientKeyFile ? { key: pem('clientKeyFile', setting.clientKeyFile, 'PRIVATE KEY') } : {}),
  };
}
