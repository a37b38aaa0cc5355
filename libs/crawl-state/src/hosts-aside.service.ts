import { Inject, Injectable } from '@nestjs/common';
import { STATE_STORE, StateStore } from '@crawler/state';

/**
 * Why a host's URLs are no longer fetched: robots.txt stayed unreachable, or it asks for too long a
 * Crawl-delay (both for the rest of the crawl); or its requests kept timing out (`timeouts`: backed off, its
 * URLs kept for its next turn, and off the list again once it answers).
 */
export type SetAsideReason = 'robots-unreachable' | 'crawl-delay' | 'timeouts';

export interface HostSetAside {
  host: string;
  reason: SetAsideReason;
  /** ISO time it was set aside. */
  at: string;
  /** In words, for status pages and summaries (`Crawl-delay 3600 s > FRONTIER_MAX_CRAWL_DELAY_MS 30 s`). */
  detail: string;
  /** URLs of the host dropped since (queued then, and arrived later); for `timeouts`, its URLs waiting. */
  urls: number;
  /** For `timeouts`: ISO time of the host's next turn. */
  until?: string;
}

/** A host whose robots.txt is unreachable: its URLs wait for the next try, until it is given up. */
export interface HostWaiting {
  host: string;
  /** ISO times: first failure, next try, and when it is given up if robots.txt still fails. */
  since: string;
  nextTryAt: string;
  giveUpAt: string;
  tries: number;
  /** The last failed answer's status, or the error when there was no answer (and its kind: `refused`, `timeout-connect`…). */
  status?: number;
  error?: string;
  errorKind?: string;
}

/** Failure kinds in the words a terminal shows. */
const FAILURE_WORDS: Record<string, string> = {
  refused: 'connection refused',
  reset: 'connection reset',
  'timeout-connect': 'connection timed out',
  'timeout-headers': 'no answer in time',
  'timeout-body': 'answer cut off in time',
  'timeout-total': 'timed out',
  'timeout-rate': 'answered too slowly',
  dns: 'name did not resolve',
  tls: 'TLS failed',
  protocol: 'not valid HTTP',
};

/** A robots.txt's last failure in words: "answered 500", "connection refused (connect ECONNREFUSED 127.0.0.1:9)". */
export function robotsFailureInWords(failure: { status?: number; error?: string; errorKind?: string }): string {
  if (failure.status !== undefined) return `answered ${failure.status}`;
  const words = failure.errorKind ? FAILURE_WORDS[failure.errorKind] : undefined;
  if (words) return failure.error ? `${words} (${failure.error})` : words;
  return failure.error ?? 'unreachable';
}

/** How long the names of set-aside hosts are trusted in a process before they are read again. */
const NAMES_TTL_MS = 1000;

/**
 * The hosts a crawl waits for or has set aside, shared by every process through the state store (namespace
 * `hosts-aside`): the frontier writes, the control plane and the embedded run's summary read. A set-aside
 * host is never fetched again in this crawl; it is listed by name with its reason, so that a crawl that
 * leaves hosts behind says which and why.
 */
@Injectable()
export class HostsAside {
  private readonly store: StateStore;
  private reasons: { byHost: Map<string, SetAsideReason>; readAt: number } = { byHost: new Map(), readAt: -Infinity };

  constructor(@Inject(STATE_STORE) state: StateStore) {
    this.store = state.namespace('hosts-aside');
  }

  async waiting(entry: HostWaiting, keepMs: number): Promise<void> {
    await this.store.set(`waiting.${entry.host}`, JSON.stringify(entry), Math.max(1, keepMs));
    await this.store.setAdd('waiting', [entry.host]);
  }

  async doneWaiting(host: string): Promise<void> {
    await this.store.setRemove('waiting', host);
    await this.store.del(`waiting.${host}`);
  }

  /** Hosts waiting for their robots.txt, soonest next try first; `count` is all of them, `hosts` at most `limit`. */
  async listWaiting(limit = 100): Promise<{ count: number; hosts: HostWaiting[] }> {
    const names = await this.store.setMembers('waiting');
    const hosts: HostWaiting[] = [];
    let gone = 0;
    for (const host of names.slice(0, limit)) {
      const raw = await this.store.get(`waiting.${host}`);
      const entry = raw ? parse<HostWaiting>(raw) : null;
      if (entry) hosts.push(entry);
      else {
        // Its entry expired: nobody has asked for the host for a long while, it waits no more.
        gone++;
        await this.store.setRemove('waiting', host);
      }
    }
    hosts.sort((a, b) => (a.nextTryAt < b.nextTryAt ? -1 : 1));
    return { count: names.length - gone, hosts };
  }

  async setAside(host: string, reason: SetAsideReason, detail: string, urls: number): Promise<void> {
    const entry: Omit<HostSetAside, 'urls'> = { host, reason, at: new Date().toISOString(), detail };
    await this.store.hashSet('set-aside', host, JSON.stringify(entry));
    await this.store.hashIncr('set-aside.urls', host, urls);
    this.reasons.byHost.set(host, reason);
    await this.doneWaiting(host);
  }

  /**
   * A host backed off for timeouts: listed like a set-aside host, but its URLs are kept (not in
   * setAsideReasons) and it leaves the list when it answers again (`answered`).
   */
  async backedOff(host: string, detail: string, until: number, urls: number): Promise<void> {
    const entry: HostSetAside = { host, reason: 'timeouts', at: new Date().toISOString(), detail, urls, until: new Date(until).toISOString() };
    await this.store.set(`backed-off.${host}`, JSON.stringify(entry));
    await this.store.setAdd('backed-off', [host]);
  }

  async answered(host: string): Promise<void> {
    await this.store.setRemove('backed-off', host);
    await this.store.del(`backed-off.${host}`);
  }

  /** Counts URLs of a set-aside host dropped after it was set aside. */
  addUrls(host: string, urls: number): Promise<number> {
    return this.store.hashIncr('set-aside.urls', host, urls);
  }

  /** Hosts set aside for good, and those backed off for timeouts at the moment. */
  async listSetAside(): Promise<HostSetAside[]> {
    const [entries, urls] = await Promise.all([this.store.hashGetAll('set-aside'), this.store.hashGetAll('set-aside.urls')]);
    const setAside = Object.values(entries).flatMap((raw) => {
      const entry = parse<Omit<HostSetAside, 'urls'>>(raw);
      return entry ? [{ ...entry, urls: Number(urls[entry.host] ?? 0) }] : [];
    });
    return [...setAside, ...(await this.listBackedOff())].sort((a, b) => (a.host < b.host ? -1 : 1));
  }

  async listBackedOff(): Promise<HostSetAside[]> {
    const hosts: HostSetAside[] = [];
    for (const host of await this.store.setMembers('backed-off')) {
      const raw = await this.store.get(`backed-off.${host}`);
      const entry = raw ? parse<HostSetAside>(raw) : null;
      if (entry) hosts.push(entry);
    }
    return hosts;
  }

  /** Hosts set aside for good (not those backed off) and why, read at most once a second per process (the frontier asks on every batch). */
  async setAsideReasons(): Promise<ReadonlyMap<string, SetAsideReason>> {
    if (Date.now() - this.reasons.readAt >= NAMES_TTL_MS) {
      const entries = await this.store.hashGetAll('set-aside');
      const byHost = new Map<string, SetAsideReason>();
      for (const [host, raw] of Object.entries(entries)) byHost.set(host, parse<HostSetAside>(raw)?.reason ?? 'robots-unreachable');
      this.reasons = { byHost, readAt: Date.now() };
    }
    return this.reasons.byHost;
  }
}

function parse<T>(raw: string): T | null {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

/** One line for a status page or a terminal: which hosts the crawl waits for, and until when. */
export function describeWaiting(waiting: { count: number; hosts: HostWaiting[] }, shown = 5): string {
  const names = waiting.hosts.slice(0, shown).map((h) => `${h.host} (${robotsFailureInWords(h)}; next try ${h.nextTryAt}, given up at ${h.giveUpAt})`);
  const more = waiting.count - names.length;
  const hosts = waiting.count === 1 ? 'host' : 'hosts';
  return `only waiting for the robots.txt of ${waiting.count} ${hosts} (5xx, 429 or unreachable): ${names.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
