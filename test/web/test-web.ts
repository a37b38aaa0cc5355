/**
 * The local multi-host test web: hundreds of virtual hosts (`site-000.test` …) served by name on one
 * port of 127.0.0.1, chosen by the Host header. Crawlers reach the names through their own hosts map
 * (`hostsFile()`); nothing ever leaves the machine.
 *
 * Every request is logged before it is answered, so tests can check what a crawler fetched, how often,
 * and how politely. `expected` says what a correct crawl from `seeds()` fetches and must not fetch.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ExpectedCrawl, expectedCrawl } from './expected-crawl';
import { HostRoles, SiteGraph } from './site-graph';

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
}

export interface LoggedRequest {
  /** Host header, lower-cased, without port. */
  host: string;
  /** Request target as sent: path and query. */
  path: string;
  /** Arrival time in ms since the epoch, sub-millisecond precision (performance.timeOrigin + now()). */
  at: number;
  status: number;
}

export class TestWeb {
  readonly hostNames: string[];
  readonly roles: HostRoles;
  readonly expected: ExpectedCrawl;
  private readonly log: LoggedRequest[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    private readonly graph: SiteGraph,
  ) {
    this.hostNames = graph.hostNames;
    this.roles = graph.roles;
    this.expected = expectedCrawl(graph, this.seeds());
  }

  static async start(options: TestWebOptions = {}): Promise<TestWeb> {
    const graphOptions = {
      hosts: options.hosts ?? 200,
      pagesPerHost: options.pagesPerHost ?? 5,
      seed: options.seed ?? 1,
      crawlDelayHosts: options.crawlDelayHosts ?? 3,
    };
    // Build once up front so bad options fail before a port is taken.
    new SiteGraph(graphOptions, 0);
    let web: TestWeb | undefined;
    const server = http.createServer((req, res) => {
      if (web) web.handle(req, res);
      else res.writeHead(503).end();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    web = new TestWeb(server, port, new SiteGraph(graphOptions, port));
    return web;
  }

  origin(host: string): string {
    return this.graph.origin(host);
  }

  /** URLs a crawl starts from: the home page of the first host. */
  seeds(): string[] {
    return [this.graph.url(this.roles.seed, '/')];
  }

  /** hosts(5) lines pointing every virtual host at 127.0.0.1. */
  hostsFile(): string {
    return this.hostNames.map((h) => `127.0.0.1 ${h}`).join('\n') + '\n';
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

  /** Clears the request log. */
  reset(): void {
    this.log.length = 0;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.close((err) => (err ? reject(err) : resolve()));
      this.server.closeAllConnections();
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const host = hostWithoutPort(req.headers.host);
    const path = req.url ?? '/';
    const reply = this.graph.reply(host, path);
    this.log.push({ host, path, at: performance.timeOrigin + performance.now(), status: reply.status });
    const headers: http.OutgoingHttpHeaders = {
      'Content-Type': reply.contentType,
      'Content-Length': reply.body.length,
    };
    if (reply.location !== undefined) headers.Location = reply.location;
    res.writeHead(reply.status, headers);
    res.end(req.method === 'HEAD' ? undefined : reply.body);
  }
}

function hostWithoutPort(header: string | undefined): string {
  if (!header) return '';
  const host = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0];
  return host.toLowerCase().replace(/\.$/, '');
}
