import { PATH_KINDS, type PathKind, type ScaleWeb } from './scale-web';

/**
 * What the scale web sees of a crawler, kept in typed arrays indexed by host, address and page, so that its
 * memory is fixed by the web's size (about one byte a page) and never by what was fetched: requests and pages
 * served, URLs asked twice, robots.txt violations, and politeness per host and per address.
 */
export interface ScaleObservation {
  requests: number;
  robotsRequests: number;
  /** 200 text/html answers to pages and their duplicates (/, /p/N, /d/N). */
  pagesServed: number;
  /** Distinct pages (/, /p/N) asked for at least once: "pages fetched" in the results. */
  pagesFetched: number;
  /** Reachable pages (hosts × pages per host). */
  reachablePages: number;
  bytes: number;
  byStatus: Record<string, number>;
  /** Requests for a URL already asked for (robots.txt excepted), by kind of path (p, d, r, missing, err, private). */
  repeatsByKind: Partial<Record<PathKind, number>>;
  repeatRequests: number;
  /** Requests for a path robots.txt disallows. */
  robotsViolations: number;
  /** Requests to a host (robots.txt excepted) before its robots.txt was asked for. */
  beforeRobots: number;
  /** Requests for paths the web does not have (assets the pages name, …). */
  otherRequests: number;
  hostsVisited: number;
  /** Most requests one host had in flight at once. */
  maxInFlightPerHost: number;
  /** Request starts on one host closer to the one before than that host's expected delay. */
  tooClose: number;
  /** Shortest interval between two request starts on one host, ms (null: no host had two). */
  minIntervalMs: number | null;
  /** The same over the hosts with a Crawl-delay. */
  minCrawlDelayIntervalMs: number | null;
  /** Most requests in flight at once on one shared address, and on one host's own address. */
  maxInFlightPerSharedAddress: number;
  maxInFlightPerOwnAddress: number;
  /** Most requests in flight on the whole web at once, and in flight now. */
  maxInFlight: number;
  inFlight: number;
}

export interface ObserverOptions {
  /** The delay the crawler was asked to keep between two requests to one host, ms (robots.txt's Crawl-delay raises it). */
  delayMs: number;
}

const KIND_BIT = Object.fromEntries(PATH_KINDS.map((kind, i) => [kind, 1 << i])) as Record<PathKind, number>;

export class ScaleWebObserver {
  /** Per (host, page): one bit per kind of path asked for. */
  private readonly asked: Uint8Array;
  private readonly robotsAsked: Uint8Array;
  private readonly hostInFlight: Uint16Array;
  private readonly hostLastStart: Float64Array;
  private readonly addressInFlight: Uint16Array;
  private hostsVisited = 0;
  private readonly o: Omit<ScaleObservation, 'minIntervalMs' | 'minCrawlDelayIntervalMs' | 'hostsVisited' | 'reachablePages'>;
  private minInterval = Infinity;
  private minCrawlDelayInterval = Infinity;

  constructor(
    private readonly web: ScaleWeb,
    private readonly options: ObserverOptions,
  ) {
    this.asked = new Uint8Array(web.pages);
    this.robotsAsked = new Uint8Array(web.hosts);
    this.hostInFlight = new Uint16Array(web.hosts);
    this.hostLastStart = new Float64Array(web.hosts).fill(-Infinity);
    this.addressInFlight = new Uint16Array(web.addressCount);
    this.o = {
      requests: 0,
      robotsRequests: 0,
      pagesServed: 0,
      pagesFetched: 0,
      bytes: 0,
      byStatus: {},
      repeatsByKind: {},
      repeatRequests: 0,
      robotsViolations: 0,
      beforeRobots: 0,
      otherRequests: 0,
      maxInFlightPerHost: 0,
      tooClose: 0,
      maxInFlightPerSharedAddress: 0,
      maxInFlightPerOwnAddress: 0,
      maxInFlight: 0,
      inFlight: 0,
    };
  }

  /** A request starts (`path` without query or fragment); call the answer once its response is sent. */
  start(h: number, path: string, now: number): (status: number, contentType: string, bytes: number) => void {
    const o = this.o;
    o.requests++;
    o.inFlight++;
    o.maxInFlight = Math.max(o.maxInFlight, o.inFlight);
    const web = this.web;
    if (h < 0) {
      o.otherRequests++;
      return (status, _type, bytes) => this.end(status, bytes);
    }
    if (this.hostLastStart[h] === -Infinity && !this.robotsAsked[h]) this.hostsVisited++;
    const interval = now - this.hostLastStart[h];
    const crawlDelayMs = web.crawlDelay(h) * 1000;
    if (interval < Math.max(this.options.delayMs, crawlDelayMs)) o.tooClose++;
    this.minInterval = Math.min(this.minInterval, interval);
    if (crawlDelayMs) this.minCrawlDelayInterval = Math.min(this.minCrawlDelayInterval, interval);
    this.hostLastStart[h] = now;
    o.maxInFlightPerHost = Math.max(o.maxInFlightPerHost, ++this.hostInFlight[h]);
    const address = web.addressIndex(h);
    const onAddress = ++this.addressInFlight[address];
    if (web.isShared(h)) o.maxInFlightPerSharedAddress = Math.max(o.maxInFlightPerSharedAddress, onAddress);
    else o.maxInFlightPerOwnAddress = Math.max(o.maxInFlightPerOwnAddress, onAddress);

    let page = false;
    if (path === '/robots.txt') {
      o.robotsRequests++;
      this.robotsAsked[h] = 1;
    } else {
      if (!this.robotsAsked[h]) o.beforeRobots++;
      if (web.disallowed(h, path)) o.robotsViolations++;
      const parsed = web.parse(path);
      if (!parsed) o.otherRequests++;
      else {
        const i = h * web.pagesPerHost + parsed.page;
        const bit = KIND_BIT[parsed.kind];
        if (this.asked[i] & bit) {
          o.repeatRequests++;
          o.repeatsByKind[parsed.kind] = (o.repeatsByKind[parsed.kind] ?? 0) + 1;
        } else {
          this.asked[i] |= bit;
          if (parsed.kind === 'p') o.pagesFetched++;
        }
        page = parsed.kind === 'p' || parsed.kind === 'd';
      }
    }
    return (status, contentType, bytes) => {
      this.hostInFlight[h]--;
      this.addressInFlight[address]--;
      if (page && status === 200 && contentType.startsWith('text/html')) o.pagesServed++;
      this.end(status, bytes);
    };
  }

  observation(): ScaleObservation {
    return {
      ...this.o,
      byStatus: { ...this.o.byStatus },
      repeatsByKind: { ...this.o.repeatsByKind },
      reachablePages: this.web.pages,
      hostsVisited: this.hostsVisited,
      minIntervalMs: Number.isFinite(this.minInterval) ? round(this.minInterval) : null,
      minCrawlDelayIntervalMs: Number.isFinite(this.minCrawlDelayInterval) ? round(this.minCrawlDelayInterval) : null,
    };
  }

  /** Reachable pages never asked for: how many, and the first `limit` of them as URLs. */
  lost(limit: number): { count: number; urls: string[] } {
    const urls: string[] = [];
    let count = 0;
    const bit = KIND_BIT.p;
    const web = this.web;
    for (let i = 0; i < this.asked.length; i++) {
      if (this.asked[i] & bit) continue;
      count++;
      if (urls.length < limit) {
        const h = Math.floor(i / web.pagesPerHost);
        const page = i % web.pagesPerHost;
        urls.push(`http://${web.name(h)}:${web.port}${page === 0 ? '/' : `/p/${page}`}`);
      }
    }
    return { count, urls };
  }

  private end(status: number, bytes: number): void {
    const o = this.o;
    o.inFlight--;
    o.byStatus[status] = (o.byStatus[status] ?? 0) + 1;
    o.bytes += bytes;
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
