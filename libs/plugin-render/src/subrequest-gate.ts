import { isIP, LookupFunction } from 'node:net';
import { Agent, fetch } from 'undici';
import { parseRetryAfter, type Resolution } from '@crawler/net';
import { RobotsCache, RobotsPolicy, robotsUrlFor } from '@crawler/robots';
import type { StateStore } from '@crawler/state';
import { PortPolicy } from '@crawler/url';
import { HostTurns } from './host-turns';

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
   * Where the turns at each host and address are taken: the plugin's state store, shared by every render
   * replica (Redis), so that they pace their requests together.
   */
  turns: StateStore;
  /** The frontier's politeness settings the gate paces by (FRONTIER_MIN_DELAY_MS, _DELAY_MULTIPLIER, _PER_IP_INTERVAL_MS, _MAX_BACKOFF_MS). */
  politeness: { minDelayMs: number; delayMultiplier: number; perIpIntervalMs: number; maxBackoffMs: number };
  /** Redirects followed for one sub-request (the crawl's DOWNLOADER_MAX_REDIRECTS). */
  maxRedirects: number;
}

export type GateAnswer =
  | { ok: true; status: number; headers: Record<string, string>; body: Buffer }
  | { ok: false; reason: 'scheme' | 'port' | 'address' | 'dns' | 'robots' | 'redirects' | 'too-large' | 'network'; detail: string };

/** Response headers not passed back to the browser: they describe the wire, not the body it gets. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'content-length', 'set-cookie']);
/** Hosts whose last response time and run of 429/503 answers this process remembers; the oldest is forgotten first. */
const RESPONSE_TIMES_KEPT = 10_000;
/** Request headers not sent on to another origin when a redirect leads there. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

type GateRequest = { method: string; headers: Record<string, string>; body?: Buffer | null };

/**
 * Every request a rendered page makes, answered by the crawler instead of by the browser: only http(s), on
 * a port the crawl's port rules allow (redirects followed here, each hop judged the same); the host resolved
 * by the crawl's own resolver, which vets its address, then connected to at exactly that address, so a name
 * that changes its answer between the check and the connection (DNS rebinding) cannot lead inside;
 * robots.txt of the request's origin obeyed (the crawl's cached answer, else fetched through this same gate
 * and cached for the crawl); requests to one host spaced by the frontier's delay, and to one address by its
 * per-IP interval, in turns every render replica shares (HostTurns).
 */
export class SubrequestGate {
  /** robots.txt fetches in flight, by URL. */
  private readonly robotsFetches = new Map<string, Promise<RobotsPolicy>>();
  /** The last response time of each host, ms, and its run of 429/503 answers (this process's requests). */
  private readonly recent = new Map<string, { ms: number; slowDowns: number }>();
  private readonly turns: HostTurns;

  constructor(private readonly options: GateOptions) {
    this.turns = new HostTurns(options.turns);
  }

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
    await this.turn(target.host, vetted.address, crawlDelayMs, signal);
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
      await this.remember(target.host, performance.now() - started, response.status, response.headers.get('retry-after') ?? undefined);
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
  }

  /**
   * Waits for the host's turn, then the address's, taken in the state every render replica shares: requests
   * to one host leave the frontier's delay apart (the largest of FRONTIER_MIN_DELAY_MS, the host's robots.txt
   * Crawl-delay and FRONTIER_DELAY_MULTIPLIER times its last response time), and requests to one address,
   * whatever the host, FRONTIER_PER_IP_INTERVAL_MS apart.
   */
  private async turn(host: string, address: string, crawlDelayMs: number | undefined, signal: AbortSignal): Promise<void> {
    const { minDelayMs, delayMultiplier, perIpIntervalMs } = this.options.politeness;
    const delayMs = Math.max(minDelayMs, crawlDelayMs ?? 0, Math.round(delayMultiplier * (this.recent.get(host)?.ms ?? 0)));
    await this.turns.take(`host:${host}`, delayMs, signal);
    await this.turns.take(`ip:${address}`, perIpIntervalMs, signal);
  }

  /**
   * Notes a response. A 429 or 503 holds the host's next turn, for every replica, as the frontier would: the
   * longer of its Retry-After and an exponential backoff from FRONTIER_MIN_DELAY_MS (1 s at least), both
   * capped at FRONTIER_MAX_BACKOFF_MS.
   */
  private async remember(host: string, ms: number, status: number, retryAfter: string | undefined): Promise<void> {
    const slowDowns = status === 429 || status === 503 ? (this.recent.get(host)?.slowDowns ?? 0) + 1 : 0;
    this.recent.delete(host);
    this.recent.set(host, { ms, slowDowns });
    if (this.recent.size > RESPONSE_TIMES_KEPT) this.recent.delete(this.recent.keys().next().value!);
    if (slowDowns === 0) return;
    const { minDelayMs, maxBackoffMs } = this.options.politeness;
    const exponential = Math.max(minDelayMs, 1000) * 2 ** (slowDowns - 1);
    await this.turns.hold(`host:${host}`, Math.min(maxBackoffMs, Math.max(exponential, parseRetryAfter(retryAfter) ?? 0)));
  }
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
