/**
 * What the benchmark web sees of a crawler: pages served, the politeness of every host's requests (most in
 * flight at once, shortest time between two request starts), robots violations (a disallowed path fetched,
 * or any page fetched before the host's robots.txt), and URLs fetched more than once.
 */
export interface WebObservation {
  requests: number;
  /** 200 text/html responses to page paths (robots.txt excluded): what "pages" means in the results. */
  pages: number;
  byStatus: Record<string, number>;
  bytes: number;
  /** First request start to last response end, ms. */
  windowMs: number;
  hostsVisited: number;
  /** Most requests one host had in flight at once, over all hosts. */
  maxInFlightPerHost: number;
  /** Shortest interval between two request starts on one host, ms, over all hosts (null: no host had two). */
  minIntervalMs: number | null;
  /** Shortest time a host was left idle between a response and its next request, ms. */
  minIdleGapMs: number | null;
  /** Requests for a path the host's robots.txt disallows. */
  robotsViolations: number;
  /** Requests to a host (other than for robots.txt) before its robots.txt was asked for. */
  beforeRobots: number;
  /** Requests for a URL already requested in this run (robots.txt excluded). */
  repeatRequests: number;
  /** Most requests in flight on the whole web at once. */
  maxInFlight: number;
}

interface HostLog {
  inFlight: number;
  maxInFlight: number;
  lastStart: number;
  lastEnd: number;
  minInterval: number;
  minIdle: number;
  robotsAsked: boolean;
}

export class WebObserver {
  private hosts = new Map<string, HostLog>();
  private seen = new Set<string>();
  private o = blank();
  private first = 0;
  private last = 0;
  private inFlight = 0;

  constructor(private readonly disallowed: (host: string, path: string) => boolean) {}

  reset(): void {
    this.hosts = new Map();
    this.seen = new Set();
    this.o = blank();
    this.first = this.last = 0;
  }

  /** A request starts; call the answer when its response has been sent. */
  start(host: string, path: string, now: number): (status: number, contentType: string, bytes: number) => void {
    let log = this.hosts.get(host);
    if (!log) {
      log = { inFlight: 0, maxInFlight: 0, lastStart: -Infinity, lastEnd: -Infinity, minInterval: Infinity, minIdle: Infinity, robotsAsked: false };
      this.hosts.set(host, log);
    }
    const o = this.o;
    o.requests++;
    if (this.first === 0) this.first = now;
    log.minInterval = Math.min(log.minInterval, now - log.lastStart);
    if (log.inFlight === 0) log.minIdle = Math.min(log.minIdle, now - log.lastEnd);
    log.lastStart = now;
    log.inFlight++;
    log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
    this.inFlight++;
    o.maxInFlight = Math.max(o.maxInFlight, this.inFlight);
    const robots = path === '/robots.txt';
    if (robots) log.robotsAsked = true;
    else {
      if (!log.robotsAsked) o.beforeRobots++;
      if (this.disallowed(host, path)) o.robotsViolations++;
      const key = `${host}${path}`;
      if (this.seen.has(key)) o.repeatRequests++;
      else this.seen.add(key);
    }
    const entry = log;
    return (status, contentType, bytes) => {
      const end = performance.now();
      entry.inFlight--;
      entry.lastEnd = end;
      this.inFlight--;
      this.last = end;
      o.byStatus[status] = (o.byStatus[status] ?? 0) + 1;
      o.bytes += bytes;
      if (!robots && status === 200 && contentType.startsWith('text/html')) o.pages++;
    };
  }

  observation(): WebObservation {
    let minInterval = Infinity;
    let minIdle = Infinity;
    let maxInFlightPerHost = 0;
    for (const log of this.hosts.values()) {
      minInterval = Math.min(minInterval, log.minInterval);
      minIdle = Math.min(minIdle, log.minIdle);
      maxInFlightPerHost = Math.max(maxInFlightPerHost, log.maxInFlight);
    }
    return {
      ...this.o,
      byStatus: { ...this.o.byStatus },
      windowMs: this.last - this.first,
      hostsVisited: this.hosts.size,
      maxInFlightPerHost,
      minIntervalMs: Number.isFinite(minInterval) ? round(minInterval) : null,
      minIdleGapMs: Number.isFinite(minIdle) ? round(minIdle) : null,
    };
  }
}

function blank(): WebObservation {
  return {
    requests: 0,
    pages: 0,
    byStatus: {},
    bytes: 0,
    windowMs: 0,
    hostsVisited: 0,
    maxInFlightPerHost: 0,
    minIntervalMs: null,
    minIdleGapMs: null,
    robotsViolations: 0,
    beforeRobots: 0,
    repeatRequests: 0,
    maxInFlight: 0,
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
