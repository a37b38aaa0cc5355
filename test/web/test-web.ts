/**
 * The local multi-host test web: hundreds of virtual hosts (`site-000.test` …) served by name on one
 * port of 127.0.0.1, chosen by the Host header. Crawlers reach the names through their own hosts map
 * (`hostsFile()`); nothing ever leaves the machine.
 *
 * Every request is logged before it is answered, so tests can check what a crawler fetched, how often,
 * and how politely. `expected` says what a correct crawl from `seeds()` fetches and must not fetch.
 *
 * Options off by default add dedicated hosts for politeness and freshness tests (dedicated-hosts.ts):
 * rate-limited (`limited-N.test`), slow (`slow-N.test`), sharing the address 127.0.0.2 (`shared-N.test`)
 * and `fresh-0.test`, plus HTTP validators (ETag, Last-Modified, 304) on every page. They are seeded
 * with `extraSeeds()` and kept out of `expected.reachable`; with the defaults nothing changes.
 *
 * Addresses: the server listens on 127.0.0.1, and also on 127.0.0.2 (same port) when `sharedIpHosts`
 * is above 0. Either address serves every host, chosen by the Host header as always; which one a
 * request came in on is logged as `localAddress`, so a test can tell whether a crawler followed the
 * hosts file (shared hosts → 127.0.0.2) without the server refusing anything.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  DEFAULT_ADDRESS,
  DedicatedHosts,
  DedicatedReply,
  DedicatedRoles,
  GrowingHubsOptions,
  HubServe,
  RateLimitedHostOptions,
  SHARED_ADDRESS,
  SlowHostOptions,
  entityTag,
  fixedLastModified,
} from './dedicated-hosts';
import { ExpectedCrawl, expectedCrawl, normaliseUrl } from './expected-crawl';
import { HostRoles, ImageResource, PageResource, SiteGraph } from './site-graph';

export type { HubServe } from './dedicated-hosts';
export { EXPIRES_AFTER_MS, SHARED_ADDRESS } from './dedicated-hosts';

export interface TestWebOptions {
  /** Number of virtual hosts (at least 12). @defaultValue 200 */
  hosts?: number;
  /** Pages per host: `/`, `/p/1` … `/p/{n-1}` (at least 2). @defaultValue 5 */
  pagesPerHost?: number;
  /** Seed of the generator: same seed, same web. @defaultValue 1 */
  seed?: number;
  /** How many hosts announce `Crawl-delay: 1` in robots.txt. @defaultValue 3 */
  crawlDelayHosts?: number;
  /** Port on 127.0.0.1; 0 picks a free one. @defaultValue 0 */
  port?: number;
  /**
   * One dedicated host `limited-{i}.test` per entry (home page + `/p/1` … `/p/3`, robots.txt allows
   * everything): its first `failures` non-robots requests answer `status` (with `Retry-After` when
   * `retryAfterSeconds` is given), later ones are served normally. @defaultValue []
   */
  rateLimitedHosts?: RateLimitedHostOptions[];
  /** One dedicated host `slow-{i}.test` per entry, whose non-robots answers wait `delayMs` before the headers. @defaultValue [] */
  slowHosts?: SlowHostOptions[];
  /**
   * This many dedicated hosts `shared-{i}.test`, mapped to 127.0.0.2 by `hostsFile()`; their home pages
   * link to each other. Above 0 the server also listens on 127.0.0.2, same port. @defaultValue 0
   */
  sharedIpHosts?: number;
  /**
   * Every 200 HTML page carries `ETag`, `Last-Modified` and `Cache-Control: no-cache` (no-cache left out
   * on `/expires`), and a matching `If-None-Match` (or, without one, `If-Modified-Since` not before
   * Last-Modified) gets `304 Not Modified`. Adds the host `fresh-0.test`. @defaultValue false
   */
  freshness?: boolean;
  /**
   * Adds two spider-trap hosts whose pages are generated without end (robots.txt allows everything):
   * `calendar-0.test`, an infinite calendar (months and days, both directions), and `loop-0.test`, whose
   * relative links `a/` and `b/` grow paths /a/b/a/b/…. `trapLinks()` tells what a trap page links to.
   * @defaultValue false
   */
  traps?: boolean;
  /**
   * Adds `app-0.test`, a site built by its scripts: its home page is an empty `<div id="root">` and a
   * script bundle `/app.js`, which fetches `/links.json` and writes the links to `/p/1` … `/p/3` into the
   * page (a crawler that does not run scripts finds none of them); the script also asks the cloud metadata
   * address 169.254.169.254, which a crawler must refuse. `expected.scripted` lists the pages.
   * @defaultValue false
   */
  scripted?: boolean;
  /**
   * Adds `hubs-0.test`, for recrawl policies: hub pages that gain one item link every `linkEveryMs`, and
   * clock pages that change on every request without adding links (dedicated-hosts.ts). Off by default.
   */
  growingHubs?: GrowingHubsOptions;
}

/** The roles of the graph hosts and of the dedicated hosts (empty arrays when their option is off). */
export interface TestWebRoles extends HostRoles, DedicatedRoles {}

/** `expected` of the graph crawl from `seeds()`, plus the page URLs of the dedicated hosts. */
export interface TestWebExpected extends ExpectedCrawl {
  /** Rate-limited host → its page URLs (home page first). */
  rateLimited: Map<string, string[]>;
  /** Slow host → its page URLs (home page first). */
  slow: Map<string, string[]>;
  /** Page URLs of every shared-address host, all reachable from the first one's home page. */
  sharedIp: string[];
  /** Fresh host → its page URLs: `/`, `/static`, `/news`, `/expires`. */
  fresh: Map<string, string[]>;
  /** Page URLs of the script-built host (home page first); only the home page is linked without scripts. */
  scripted: string[];
}

export interface LoggedRequest {
  /** Host header, lower-cased, without port. */
  host: string;
  /** Request target as sent: path and query. */
  path: string;
  /** Arrival time in ms since the epoch, sub-millisecond precision (performance.timeOrigin + now()). */
  at: number;
  /**
   * When the response finished (same clock as `at`; the connection closing first counts as the end).
   * Undefined while the answer is still being sent or held back.
   */
  endAt?: number;
  status: number;
  /** Local address the request arrived on, plain IPv4: '127.0.0.1' or '127.0.0.2'. */
  localAddress: string;
  /** Whether the request carried If-None-Match or If-Modified-Since. */
  conditional: boolean;
  /** The User-Agent it was sent with. */
  userAgent?: string;
  /** The port the request's connection came from (a proxy's tunnel's, when it came through one). */
  remotePort?: number;
}

export class TestWeb {
  /** The graph hosts `site-NNN.test` (dedicated hosts are in `dedicatedHostNames`). */
  readonly hostNames: string[];
  /** The dedicated hosts, in the order limited, slow, shared, fresh (empty with the default options). */
  readonly dedicatedHostNames: string[];
  readonly roles: TestWebRoles;
  readonly expected: TestWebExpected;
  private readonly log: LoggedRequest[] = [];
  private readonly freshness: boolean;
  private readonly inFlight = { byHost: new Map<string, number>(), byAddress: new Map<string, number>() };
  private readonly maxInFlight = { byHost: new Map<string, number>(), byAddress: new Map<string, number>() };
  /** Answers of slow hosts still being held back (cleared by `close()`). */
  private readonly held = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly servers: http.Server[],
    readonly port: number,
    private readonly graph: SiteGraph,
    private readonly dedicated: DedicatedHosts,
    freshness: boolean,
  ) {
    this.freshness = freshness;
    this.hostNames = graph.hostNames;
    this.dedicatedHostNames = dedicated.hostNames;
    this.roles = { ...graph.roles, ...dedicated.roles };
    const pagesOf = (hosts: string[]) => new Map(hosts.map((h) => [h, dedicated.pageUrls(h)]));
    this.expected = {
      ...expectedCrawl(graph, this.seeds()),
      rateLimited: pagesOf(dedicated.roles.rateLimited),
      slow: pagesOf(dedicated.roles.slow),
      sharedIp: dedicated.roles.sharedIp.flatMap((h) => dedicated.pageUrls(h)),
      fresh: pagesOf(dedicated.roles.fresh),
      scripted: dedicated.roles.scripted.flatMap((h) => dedicated.pageUrls(h)),
    };
  }

  /** Every request to the growing-hubs host, with how many links it served for the first time. */
  get hubServes(): ReadonlyArray<HubServe> {
    return this.dedicated.hubServes;
  }

  /** The body the graph answers for an absolute URL (what a faithful archive of the page holds). */
  replyBody(url: string): Buffer {
    const { hostname, pathname, search } = new URL(url);
    return this.graph.reply(hostname, pathname + search).body;
  }

  /** The status the graph answers for an absolute URL (3xx: a redirect, whose target the crawler sends back through the filter). */
  replyStatus(url: string): number {
    const { hostname, pathname, search } = new URL(url);
    return this.graph.reply(hostname, pathname + search).status;
  }

  /** The graph crawl from `seeds()` of a crawler that reads no sitemaps (`--sitemaps off`). */
  expectedWithoutSitemaps(): ExpectedCrawl {
    return expectedCrawl(this.graph, this.seeds(), { sitemaps: false });
  }

  /** The graph crawl from `seeds()` of a crawler with these plugins enabled (`--plugins png`: PNG images fetched too). */
  expectedWithPlugins(plugins: string[]): ExpectedCrawl {
    return expectedCrawl(this.graph, this.seeds(), { plugins });
  }

  /**
   * The images of the test web (roles.images): each one's absolute URL, what it holds or why it is corrupt,
   * and the pages showing it (resolved absolute URLs).
   */
  images(): { url: string; png: ImageResource['png']; body: Buffer; shownOn: string[] }[] {
    const shownOn = new Map<string, string[]>();
    const { host, other } = this.roles.images;
    for (const pageHost of [host, other]) {
      for (const path of ['/', '/p/1']) {
        const page = this.graph.resource(pageHost, path) as PageResource | undefined;
        const pageUrl = this.graph.url(pageHost, path);
        for (const src of page?.images ?? []) {
          const url = normaliseUrl(src, pageUrl);
          shownOn.set(url, [...(shownOn.get(url) ?? []), pageUrl]);
        }
      }
    }
    return [...shownOn].flatMap(([url, pages]) => {
      const { hostname, pathname } = new URL(url);
      const resource = this.graph.resource(hostname, pathname);
      return resource?.kind === 'image' ? [{ url, png: resource.png, body: resource.body, shownOn: pages }] : [];
    });
  }

  static async start(options: TestWebOptions = {}): Promise<TestWeb> {
    const graphOptions = {
      hosts: options.hosts ?? 200,
      pagesPerHost: options.pagesPerHost ?? 5,
      seed: options.seed ?? 1,
      crawlDelayHosts: options.crawlDelayHosts ?? 3,
    };
    const dedicatedOptions = {
      rateLimitedHosts: options.rateLimitedHosts ?? [],
      slowHosts: options.slowHosts ?? [],
      sharedIpHosts: options.sharedIpHosts ?? 0,
      freshness: options.freshness ?? false,
      traps: options.traps ?? false,
      scripted: options.scripted ?? false,
      growingHubs: options.growingHubs,
      seed: graphOptions.seed,
    };
    // Build once up front so bad options fail before a port is taken.
    new SiteGraph(graphOptions, 0);
    new DedicatedHosts(dedicatedOptions, 0);
    let web: TestWeb | undefined;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (web) web.handle(req, res);
      else res.writeHead(503).end();
    };
    const addresses = dedicatedOptions.sharedIpHosts > 0 ? [DEFAULT_ADDRESS, SHARED_ADDRESS] : [DEFAULT_ADDRESS];
    const { servers, port } = await listenAll(handler, addresses, options.port ?? 0);
    web = new TestWeb(servers, port, new SiteGraph(graphOptions, port), new DedicatedHosts(dedicatedOptions, port), dedicatedOptions.freshness);
    return web;
  }

  origin(host: string): string {
    return this.graph.origin(host);
  }

  /** URLs a crawl starts from: the home page of the first host. */
  seeds(): string[] {
    return [this.graph.url(this.roles.seed, '/')];
  }

  /**
   * Home pages of the dedicated hosts: every rate-limited and slow host, the first shared host (its
   * home page links to the other shared hosts), fresh-0 and the trap hosts. Empty with the default options.
   */
  extraSeeds(): string[] {
    return this.dedicated.seeds();
  }

  /** Absolute URLs a page of a trap host links to (null: not a page of a trap host). See TestWebOptions.traps. */
  trapLinks(url: string): string[] | null {
    return this.dedicated.trapLinks(url);
  }

  /** hosts(5) lines pointing every graph host at 127.0.0.1, then each dedicated host at its address. */
  hostsFile(): string {
    const lines = this.hostNames.map((h) => `127.0.0.1 ${h}`);
    for (const h of this.dedicatedHostNames) lines.push(`${this.dedicated.addressOf(h)} ${h}`);
    return `${lines.join('\n')}\n`;
  }

  /** The address `hostsFile()` maps `host` to; undefined for a host it does not list. */
  addressOf(host: string): string | undefined {
    if (this.graph.hasHost(host)) return DEFAULT_ADDRESS;
    return this.dedicated.addressOf(host);
  }

  get requests(): ReadonlyArray<LoggedRequest> {
    return this.log;
  }

  requestCount(host?: string): number {
    return host === undefined ? this.log.length : this.log.filter((r) => r.host === host).length;
  }

  /** How many times each absolute URL was requested (robots.txt included). */
  requestCountByUrl(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of this.log) {
      const url = new URL(r.path, this.origin(r.host)).href;
      counts.set(url, (counts.get(url) ?? 0) + 1);
    }
    return counts;
  }

  /**
   * Smallest gap in ms between two consecutive requests to one host (robots.txt included); over all
   * hosts when `host` is omitted. Infinity when no host got two requests.
   */
  minIntervalMs(host?: string): number {
    if (host !== undefined) return this.minIntervalByHost().get(host) ?? Infinity;
    return Math.min(Infinity, ...this.minIntervalByHost().values());
  }

  /** Host → smallest gap between consecutive requests to it (Infinity for a single request). */
  minIntervalByHost(): Map<string, number> {
    const last = new Map<string, number>();
    const min = new Map<string, number>();
    for (const r of this.log) {
      const previous = last.get(r.host);
      const gap = previous === undefined ? Infinity : r.at - previous;
      min.set(r.host, Math.min(min.get(r.host) ?? Infinity, gap));
      last.set(r.host, r.at);
    }
    return min;
  }

  /** Local address → smallest gap between consecutive requests arriving on it, whatever their hosts. */
  minIntervalByAddress(): Map<string, number> {
    const last = new Map<string, number>();
    const min = new Map<string, number>();
    for (const r of this.log) {
      const previous = last.get(r.localAddress);
      const gap = previous === undefined ? Infinity : r.at - previous;
      min.set(r.localAddress, Math.min(min.get(r.localAddress) ?? Infinity, gap));
      last.set(r.localAddress, r.at);
    }
    return min;
  }

  /**
   * Host → smallest `next.at − previous.endAt` over consecutive requests to it (robots.txt included):
   * how long the host rested between the end of one answer and the next request. Negative when two
   * requests overlapped; Infinity for a single request. A previous answer not finished yet counts as
   * ending now (its true gap is smaller still).
   */
  minGapAfterResponseByHost(): Map<string, number> {
    const now = performance.timeOrigin + performance.now();
    const last = new Map<string, LoggedRequest>();
    const min = new Map<string, number>();
    for (const r of this.log) {
      const previous = last.get(r.host);
      const gap = previous === undefined ? Infinity : r.at - (previous.endAt ?? now);
      min.set(r.host, Math.min(min.get(r.host) ?? Infinity, gap));
      last.set(r.host, r);
    }
    return min;
  }

  /** Host → most requests to it in flight at once (arrived, response not finished). */
  maxConcurrentByHost(): Map<string, number> {
    return new Map(this.maxInFlight.byHost);
  }

  /** Local address → most requests arriving on it in flight at once, whatever their hosts. */
  maxConcurrentByAddress(): Map<string, number> {
    return new Map(this.maxInFlight.byAddress);
  }

  /**
   * Clears the request log, restarts the failure count of the rate-limited hosts and the in-flight
   * maxima (down to what is in flight now). The `/news` edition counter keeps going.
   */
  reset(): void {
    this.log.length = 0;
    this.dedicated.resetCounters();
    for (const key of ['byHost', 'byAddress'] as const) {
      this.maxInFlight[key].clear();
      for (const [k, n] of this.inFlight[key]) if (n > 0) this.maxInFlight[key].set(k, n);
    }
  }

  async close(): Promise<void> {
    for (const timer of this.held) clearTimeout(timer);
    this.held.clear();
    await Promise.all(this.servers.map(closeServer));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const at = performance.timeOrigin + performance.now();
    const host = hostWithoutPort(req.headers.host);
    const path = req.url ?? '/';
    const localAddress = plainIPv4(req.socket.localAddress);
    const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;
    const reply: DedicatedReply & { location?: string } = this.dedicated.has(host)
      ? this.dedicated.answer(host, path)
      : { ...this.graph.reply(host, path), headers: {}, delayMs: 0, noCache: true };

    const headers: http.OutgoingHttpHeaders = { ...reply.headers };
    let status = reply.status;
    let body: Buffer | undefined = reply.body;
    if (reply.location !== undefined) headers.Location = reply.location;
    const validated = this.freshness && status === 200 && reply.contentType.startsWith('text/html');
    if (validated) {
      const etag = entityTag(reply.body);
      const lastModified = reply.lastModified ?? fixedLastModified(host, path);
      headers.ETag = etag;
      headers['Last-Modified'] = new Date(lastModified).toUTCString();
      if (reply.noCache) headers['Cache-Control'] = 'no-cache';
      if (notModified(req, etag, lastModified)) {
        status = 304;
        body = undefined;
      }
    }
    if (body !== undefined) {
      headers['Content-Type'] = reply.contentType;
      headers['Content-Length'] = body.length;
    }

    const record: LoggedRequest = { host, path, at, status, localAddress, conditional, userAgent: req.headers['user-agent'], remotePort: req.socket.remotePort };
    this.log.push(record);
    this.track(host, localAddress, +1);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      record.endAt = performance.timeOrigin + performance.now();
      this.track(host, localAddress, -1);
    };
    res.once('finish', end);
    res.once('close', end);

    const send = () => {
      if (res.destroyed || req.socket.destroyed) return;
      // Graph replies keep their header order (Content-Type, Content-Length, Location) as before.
      const ordered: http.OutgoingHttpHeaders =
        body === undefined ? headers : { 'Content-Type': headers['Content-Type'], 'Content-Length': headers['Content-Length'], ...headers };
      res.writeHead(status, ordered);
      res.end(req.method === 'HEAD' || body === undefined ? undefined : body);
    };
    if (reply.delayMs > 0) {
      const timer = setTimeout(() => {
        this.held.delete(timer);
        send();
      }, reply.delayMs);
      this.held.add(timer);
    } else {
      send();
    }
  }

  private track(host: string, address: string, delta: number): void {
    const bump = (key: 'byHost' | 'byAddress', k: string) => {
      const n = (this.inFlight[key].get(k) ?? 0) + delta;
      this.inFlight[key].set(k, n);
      if (n > (this.maxInFlight[key].get(k) ?? 0)) this.maxInFlight[key].set(k, n);
    };
    bump('byHost', host);
    bump('byAddress', address);
  }
}

/** RFC 9110 §13.2.2: If-None-Match decides when present (weak comparison); otherwise If-Modified-Since. */
function notModified(req: http.IncomingMessage, etag: string, lastModified: number): boolean {
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const tags = ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
    return tags.includes('*') || tags.includes(etag);
  }
  const ifModifiedSince = req.headers['if-modified-since'];
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  return Number.isFinite(since) && lastModified <= since;
}

/**
 * Listens on every address with the same port (the first address picks it when `port` is 0). When a
 * later address cannot take that port, everything is closed again; with `port` 0 a few other ports are
 * tried before giving up with an error naming the address.
 */
async function listenAll(handler: http.RequestListener, addresses: string[], port: number): Promise<{ servers: http.Server[]; port: number }> {
  const attempts = port === 0 && addresses.length > 1 ? 5 : 1;
  for (let attempt = 1; ; attempt++) {
    const servers: http.Server[] = [];
    let chosen = port;
    try {
      for (const address of addresses) {
        const server = http.createServer(handler);
        try {
          await listen(server, chosen, address);
        } catch (err) {
          if (servers.length === 0) throw err;
          const code = (err as NodeJS.ErrnoException).code ?? String(err);
          throw Object.assign(
            new Error(
              `TestWeb: cannot listen on ${address}:${chosen} (${code}); the shared-address hosts (sharedIpHosts) need ` +
                `${address} to be a loopback address of this machine with port ${chosen} free on it`,
            ),
            { code, retryable: code === 'EADDRINUSE' },
          );
        }
        servers.push(server);
        chosen = (server.address() as AddressInfo).port;
      }
      return { servers, port: chosen };
    } catch (err) {
      await Promise.all(servers.map(closeServer));
      if (attempt >= attempts || !(err as { retryable?: boolean }).retryable) throw err;
    }
  }
}

function listen(server: http.Server, port: number, address: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}

/** '::ffff:127.0.0.2' → '127.0.0.2'. */
function plainIPv4(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

function hostWithoutPort(header: string | undefined): string {
  if (!header) return '';
  const host = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0];
  return host.toLowerCase().replace(/\.$/, '');
}
