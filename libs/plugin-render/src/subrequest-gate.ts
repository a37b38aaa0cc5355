import { isIP, LookupFunction } from 'node:net';
import { Agent, fetch } from 'undici';
import type { FrontierStore, Turn } from '@crawler/frontier-store';
import { parseRetryAfter, type Resolution } from '@crawler/net';
import { RobotsCache, RobotsPolicy, robotsUrlFor } from '@crawler/robots';
import { PortPolicy } from '@crawler/url';

export interface GateOptions {
  /**
   * The crawl's resolver (`CachedResolver` of libs/net, as the DNS resolver service runs it): the crawl's hosts
   * maps, its shared cache, its DNS servers and its address rules (DNS_ALLOW_PRIVATE, DNS_ALLOW_CIDRS).
   */
  resolver: { resolve(hostname: string): Promise<Resolution> };
  /** The crawl's port rules (the URL filter's): a page's request or redirect to its host's Redis port is never made. */
  ports: PortPolicy;
  userAgent: string;
  /** Bytes read of one response; a longer one is refused. */
  maxBytes: number;
  /** The crawl's robots.txt answers (the downloader's cache): read first, and given what the gate fetched. */
  robots: RobotsCache;
  /** How long a robots.txt the gate fetched is kept in that cache. */
  robotsTtlMs: number;
  /** Told of every robots.txt the gate downloads, with its content (the crawl logs each one it downloads). */
  onRobots(url: string, status: number | null, body: string | null, error?: string): void;
  robotsMaxBytes: number;
  /**
   * The crawl's frontier store (the one its frontier dispatches from: in memory embedded, Redis distributed):
   * every request takes a turn at its host there, so that downloaders and every render replica keep one
   * schedule per host and per address.
   */
  frontier: Pick<FrontierStore, 'takeTurn' | 'endTurn'>;
  /** A turn not ended within this long (its replica died) is ended by the frontier: the render's time limit. */
  turnLeaseMs: number;
  /**
   * The frontier's politeness settings a turn's rest is decided by (FRONTIER_MIN_DELAY_MS, _DELAY_MULTIPLIER,
   * _RECENT_RESPONSES, _MAX_BACKOFF_MS, _ALLOW_DELAY_BELOW_MIN).
   */
  politeness: { minDelayMs: number; delayMultiplier: number; recentResponses: number; maxBackoffMs: number; allowDelayBelowMin: boolean };
  /** Redirects followed for one sub-request (the crawl's DOWNLOADER_MAX_REDIRECTS). */
  maxRedirects: number;
}

export type GateAnswer =
  | { ok: true; status: number; headers: Record<string, string>; body: Buffer }
  | { ok: false; reason: 'scheme' | 'port' | 'address' | 'dns' | 'robots' | 'redirects' | 'too-large' | 'network'; detail: string };

/** Response headers not passed back to the browser: they describe the wire, not the body it gets. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'content-length', 'set-cookie']);
/** The least wait before asking for a turn again. */
const RETRY_MS = 5;
/** Request headers not sent on to another origin when a redirect leads there. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

type GateRequest = { method: string; headers: Record<string, string>; body?: Buffer | null };
type TakenTurn = Extract<Turn, { leaseId: string }>;
/** What a request got, for deciding its host's rest: a response (its time, status, Retry-After), or none. */
type Answered = { ms: number; status: number; retryAfter?: string } | undefined;

/**
 * Every request a rendered page makes, answered by the crawler instead of by the browser: only http(s), on
 * a port the crawl's port rules allow (redirects followed here, each hop judged the same); the host resolved
 * by the crawl's own resolver, which vets its address, then connected to at exactly that address, so a name
 * that changes its answer between the check and the connection (DNS rebinding) cannot lead inside;
 * robots.txt of the request's origin obeyed (the crawl's cached answer, else fetched through this same gate
 * and cached for the crawl); requests to one host spaced by the frontier's delay, and to one address by its
 * per-IP interval and limit, in turns taken in the frontier's own store (FrontierStore.takeTurn), the very
 * schedule the frontier dispatches the host's URLs by: the downloaders' fetches and the sub-requests to one host
 * together stay within the host's in-flight limit (FRONTIER_PER_HOST_LIMIT, or its site's concurrency), and each
 * waits out the host's delay after the other.
 */
export class SubrequestGate {
  /** robots.txt fetches in flight, by URL. */
  private readonly robotsFetches = new Map<string, Promise<RobotsPolicy>>();

  constructor(private readonly options: GateOptions) {}

  /**
   * Fetches `url` for the browser, or says why not. Redirects are followed here, each hop through the same
   * checks, and the browser gets the final answer: a 3xx handed to it would be followed by its own network
   * stack, which no route sees (and which the launch leaves unable to resolve anything). `signal` ends it
   * with the render.
   */
  async fetch(url: string, init: GateRequest, signal: AbortSignal): Promise<GateAnswer> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { ok: false, reason: 'scheme', detail: `not a URL: ${url}` };
    }
    let request = init;
    for (let redirects = 0; ; redirects++) {
      const answer = await this.fetchOne(target, request, signal);
      if (!answer.ok) return redirects === 0 ? answer : { ...answer, detail: `${url} redirected to ${answer.detail}` };
      const location = answer.status >= 300 && answer.status < 400 ? answer.headers.location : undefined;
      if (location === undefined) return answer;
      if (redirects >= this.options.maxRedirects) return { ok: false, reason: 'redirects', detail: `${url}: more than ${this.options.maxRedirects} redirects` };
      let next: URL;
      try {
        next = new URL(location, target);
      } catch {
        return answer;
      }
      request = redirected(request, answer.status, target, next);
      target = next;
    }
  }

  /** One request, no redirect followed: scheme, port, address and robots.txt checked first. */
  private async fetchOne(target: URL, init: GateRequest, signal: AbortSignal): Promise<GateAnswer> {
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return { ok: false, reason: 'scheme', detail: `${target.protocol} is not http(s)` };
    const portRefusal = this.options.ports.refusal(target);
    if (portRefusal) return { ok: false, reason: 'port', detail: `${target.href}: ${portRefusal}` };
    // The address first: a host the crawl may not reach is refused as such, not as "robots.txt unreachable".
    const vetted = await this.vet(target.hostname);
    if (!vetted.ok) return vetted;
    const robots = await this.robotsOf(target, signal);
    if (!robots.isAllowed(target.href)) return { ok: false, reason: 'robots', detail: `${target.href} is disallowed by robots.txt` };
    return this.request(target, init, signal, robots.crawlDelayMs());
  }

  /** The vetted address of a host, or why there is none. */
  async vet(hostname: string): Promise<{ ok: true; address: string } | { ok: false; reason: 'address' | 'dns'; detail: string }> {
    const name = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const resolution = await this.options.resolver.resolve(name);
    if (resolution.ok) return { ok: true, address: resolution.address };
    return { ok: false, reason: resolution.refused ? 'address' : 'dns', detail: `${name}: ${resolution.error}` };
  }

  /**
   * The rules of the request's origin: the crawl's cached answer when there is one (the downloader fetched
   * it before the page), else fetched through this gate, once however many requests wait for it, and put in
   * the crawl's cache for the downloader and every other replica. An unreachable answer is not cached here:
   * the next sub-request of that origin asks again.
   */
  private async robotsOf(target: URL, signal: AbortSignal): Promise<RobotsPolicy> {
    const cached = await this.options.robots.get(target);
    if (cached) return cached;
    const robotsUrl = robotsUrlFor(target);
    let pending = this.robotsFetches.get(robotsUrl);
    if (!pending) {
      pending = this.fetchRobots(robotsUrl, signal).finally(() => this.robotsFetches.delete(robotsUrl));
      this.robotsFetches.set(robotsUrl, pending);
    }
    return pending;
  }

  private async fetchRobots(robotsUrl: string, signal: AbortSignal): Promise<RobotsPolicy> {
    const { userAgent, robotsMaxBytes, robotsTtlMs } = this.options;
    const answer = await this.request(new URL(robotsUrl), { method: 'GET', headers: {} }, signal);
    if (!answer.ok) {
      this.options.onRobots(robotsUrl, null, null, answer.detail);
      return RobotsPolicy.unreachable(robotsUrl, userAgent);
    }
    this.options.onRobots(robotsUrl, answer.status, answer.body.toString('utf8'));
    const policy = RobotsPolicy.fromResponse(answer.status, answer.body.toString('utf8'), robotsUrl, userAgent, { maxBytes: robotsMaxBytes });
    if (policy.outcome !== 'unreachable') await this.options.robots.put(robotsUrl, policy, robotsTtlMs);
    return policy;
  }

  private async request(target: URL, init: GateRequest, signal: AbortSignal, crawlDelayMs?: number): Promise<GateAnswer> {
    const portRefusal = this.options.ports.refusal(target);
    if (portRefusal) return { ok: false, reason: 'port', detail: `${target.href}: ${portRefusal}` };
    const vetted = await this.vet(target.hostname);
    if (!vetted.ok) return vetted;
    const turn = await this.takeTurn(target.host, vetted.address, signal);
    let answered: Answered;
    try {
      const started = performance.now();
      const family = isIP(vetted.address);
      const agent = new Agent({
        connect: {
          // The connection goes to the vetted address, whatever DNS would answer now.
          lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
            options?.all ? callback(null, [{ address: vetted.address, family }]) : callback(null, vetted.address, family)) as unknown as LookupFunction,
        },
      });
      try {
        const headers = { ...init.headers, 'user-agent': this.options.userAgent };
        delete (headers as Record<string, string>).host;
        const response = await fetch(target, { method: init.method, headers, body: init.body ?? undefined, redirect: 'manual', dispatcher: agent, signal });
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of response.body ?? []) {
          size += chunk.length;
          if (size > this.options.maxBytes) return { ok: false, reason: 'too-large', detail: `${target.href}: over ${this.options.maxBytes} bytes` };
          chunks.push(Buffer.from(chunk));
        }
        answered = { ms: performance.now() - started, status: response.status, retryAfter: response.headers.get('retry-after') ?? undefined };
        const out: Record<string, string> = {};
        response.headers.forEach((value, name) => {
          if (!HOP_HEADERS.has(name)) out[name] = value;
        });
        return { ok: true, status: response.status, headers: out, body: Buffer.concat(chunks) };
      } catch (error) {
        return { ok: false, reason: 'network', detail: `${target.href}: ${(error as Error).message}` };
      } finally {
        void agent.close();
      }
    } finally {
      const now = Date.now();
      // One millisecond more than the delay, as the frontier's completions: Date.now() drops the fraction.
      await this.options.frontier.endTurn(turn.leaseId, now + 1 + this.restMs(turn, answered, crawlDelayMs), now);
    }
  }

  /**
   * Waits for a turn at the host in the frontier's store: granted when a claim of the host's next URL would be
   * (its delay after the last request to it, a downloader's or a sub-request's, has passed, nothing is in
   * flight to it, its address is under FRONTIER_PER_IP_LIMIT and FRONTIER_PER_IP_INTERVAL_MS has passed
   * there); else asked again when the store says.
   */
  private async takeTurn(host: string, address: string, signal: AbortSignal): Promise<TakenTurn> {
    for (;;) {
      signal.throwIfAborted();
      const turn = await this.options.frontier.takeTurn(host, { now: Date.now(), ip: address, leaseMs: this.options.turnLeaseMs });
      if (turn.leaseId !== undefined) return turn;
      await delay(Math.max(RETRY_MS, turn.retryAt - Date.now()), signal);
    }
  }

  /**
   * How long the host rests after this request, by the frontier's rules (politeDelay): the largest of
   * FRONTIER_MIN_DELAY_MS (or the operator's override), its robots.txt Crawl-delay and
   * FRONTIER_DELAY_MULTIPLIER times the mean of its recent response times (the frontier's memory of them, and
   * this one); after a 429 or 503, the longer of its Retry-After and the exponential backoff one level above
   * the host's, both capped at FRONTIER_MAX_BACKOFF_MS. The turn writes no politeness memory: a page's
   * scripts and API calls say little of how fast the host serves its pages.
   */
  private restMs(turn: TakenTurn, answered: Answered, crawlDelayMs = 0): number {
    const { minDelayMs, delayMultiplier, recentResponses, maxBackoffMs, allowDelayBelowMin } = this.options.politeness;
    const override = turn.delayMs !== null && (allowDelayBelowMin || turn.delayMs >= minDelayMs) ? turn.delayMs : null;
    const recent = [...(turn.politeness?.recentMs ?? []), ...(answered ? [answered.ms] : [])].slice(-recentResponses);
    const mean = recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : 0;
    const usual = Math.max(override ?? minDelayMs, crawlDelayMs, Math.round(delayMultiplier * mean));
    if (answered?.status !== 429 && answered?.status !== 503) return usual;
    const exponential = Math.min(maxBackoffMs, Math.max(minDelayMs, 1000) * 2 ** (turn.politeness?.backoff ?? 0));
    return Math.max(usual, exponential, Math.min(maxBackoffMs, parseRetryAfter(answered.retryAfter) ?? 0));
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The request a redirect asks for (the Fetch standard's rules): 303, and 301/302 after a POST, become a GET without a body; credentials stay with their origin. */
function redirected(request: GateRequest, status: number, from: URL, to: URL): GateRequest {
  const headers = { ...request.headers };
  if (from.origin !== to.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
  const toGet = (status === 303 && request.method !== 'HEAD') || ((status === 301 || status === 302) && request.method === 'POST');
  if (!toGet) return { ...request, headers };
  for (const name of Object.keys(headers)) if (name.startsWith('content-')) delete headers[name];
  return { method: 'GET', headers, body: null };
}
