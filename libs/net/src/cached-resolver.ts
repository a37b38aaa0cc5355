import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import type { CrawlerConfig } from '@crawler/config';
import type { StateStore } from '@crawler/state';
import { AddressPolicy } from './address-policy';
import { SystemHostsFile } from './system-hosts';

export type ResolutionSource = 'literal' | 'hosts' | 'cache' | 'dns';
/** A failure is `transient` when the name may well resolve later (a timeout, SERVFAIL, a refusing server). */
/** `refused` when the name resolved, but to an address the crawl may not reach (the address policy said no). */
/**
 * `address` is the first address of the name the crawl may reach; `fallbacks` the others it may reach, in order
 * (IPv4 before IPv6), present only when there are some: a connection that fails moves on to them.
 */
export type Resolution = { ok: true; address: string; fallbacks?: string[]; source: ResolutionSource } | { ok: false; error: string; transient: boolean; refused?: true };

/** Lookup errors that say nothing about the name itself: the server or the network failed. */
const TRANSIENT_DNS_ERRORS = new Set(['ETIMEOUT', 'ETIMEDOUT', 'ESERVFAIL', 'ECONNREFUSED', 'EREFUSED', 'ECANCELLED', 'EAI_AGAIN', 'ECONNRESET', 'EBADRESP']);

/**
 * What the shared cache holds for a name (JSON, namespace `dns`, key = lower-case name): an address or
 * why the lookup failed, when the entry expires (ms since the epoch) and the TTL it was given, which
 * together say when refresh-ahead starts. Entries written before expiresAt existed are read, never
 * refreshed.
 */
export interface CachedAnswer {
  address?: string;
  /** The name's other addresses (A records, then AAAA), unvetted like `address`; absent when it has one. */
  others?: string[];
  error?: string;
  /** The failure may pass (see Resolution). */
  transient?: boolean;
  expiresAt?: number;
  ttlMs?: number;
}

/** Cache events of this process (the same events are counted crawl-wide in CrawlStats as `dns.<event>`). */
export interface DnsCacheCounts {
  /** Resolutions answered by the shared cache (`dns.cache-hit`), cached failures included. */
  hits: number;
  /** Resolutions that needed a lookup (`dns.cache-miss`), including those that joined one in flight. */
  misses: number;
  /** Background refreshes of entries near their expiry (`dns.refresh`). */
  refreshes: number;
  /** DNS queries that failed: NXDOMAIN, no data, timeout… (`dns.failure`). */
  failures: number;
}

/**
 * How a resolution of a name ended, exactly one per resolution: answered by a hosts file (`hosts`: DNS_HOSTS,
 * DNS_HOSTS_FILE or the system's), by the cache (`hit`, a cached failure included), or by a DNS query
 * (`miss`) that failed (`failure`). IP literals are not lookups and are not counted.
 */
export type DnsLookupResult = 'hosts' | 'hit' | 'miss' | 'failure';

/** What a resolver tells its owner: crawl-wide counts (`dns.<event>`), metrics, warnings. */
export interface ResolverEvents {
  count(event: 'hosts' | 'cache-hit' | 'cache-miss' | 'refresh' | 'failure'): Promise<void>;
  lookup(result: DnsLookupResult): void;
  refresh(result: 'ok' | 'failure'): void;
  warn(fields: Record<string, unknown>): void;
}

/** The state store namespace of the shared answers. */
export const DNS_CACHE_NAMESPACE = 'dns';

type Lookup = Pick<dns.Resolver, 'resolve4' | 'resolve6'>;

/**
 * The crawl's resolver: name → its vetted addresses (the first, and the others to fall back to). Static hosts map first, then the machine's hosts file (as every
 * other program on the machine resolves), then the shared cache (state store, so every replica and every
 * process that resolves for the crawl benefits), then DNS (the configured servers, else the system's); answers
 * are cached for their TTL clamped to [minTtl, maxTtl], failures for failureTtl. Concurrent lookups of one name
 * in a process share one query; an answer read in the last `refreshAheadRatio` of its TTL is refreshed in the
 * background, so hot names do not expire in the hot path. Every answer, wherever it comes from, is vetted:
 * non-public addresses are refused unless allowed. The DNS resolver service runs it for the frontier's fetches,
 * the render plugin for its browser's requests.
 */
export class CachedResolver {
  private readonly policy: AddressPolicy;
  private readonly resolver: Lookup;
  private readonly systemHosts?: SystemHostsFile;
  private readonly inflight = new Map<string, Promise<CachedAnswer>>();
  private readonly refreshing = new Map<string, Promise<void>>();
  private readonly counts: DnsCacheCounts = { hits: 0, misses: 0, refreshes: 0, failures: 0 };

  /** `cache`: the namespace of the shared state store that holds the answers (`dns`). */
  constructor(
    private readonly cache: StateStore,
    private readonly settings: CrawlerConfig['dns'],
    private readonly events: ResolverEvents,
  ) {
    const { allowPrivate, allowCidrs, servers, timeoutMs, tries } = settings;
    this.policy = new AddressPolicy({ allowPrivate, allowCidrs });
    if (settings.systemHostsFile !== 'off') this.systemHosts = new SystemHostsFile(settings.systemHostsFile, settings.minTtlMs);
    if (servers.length > 0) {
      const resolver = new dns.Resolver({ timeout: timeoutMs, tries });
      resolver.setServers(servers);
      this.resolver = resolver;
    } else {
      this.resolver = dns;
    }
  }

  async resolve(hostname: string): Promise<Resolution> {
    const name = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (isIP(name)) return this.vet([name], 'literal');
    const mapped = Object.hasOwn(this.settings.hosts, name) ? this.settings.hosts[name] : undefined;
    const pinned = mapped !== undefined ? [mapped] : this.systemHosts?.lookup(name);
    if (pinned) {
      // A lookup like any other, answered by a hosts file: left out, the hit rate would hide how many there were.
      this.events.lookup('hosts');
      await this.events.count('hosts');
      return this.vet(pinned, 'hosts');
    }
    const cached = await this.read(name);
    if (cached) {
      this.counts.hits++;
      await this.events.count('cache-hit');
      this.refreshAhead(name, cached);
    } else {
      this.counts.misses++;
      await this.events.count('cache-miss');
    }
    const answer = cached ?? (await this.lookupOnce(name));
    this.events.lookup(cached ? 'hit' : answer.error === undefined ? 'miss' : 'failure');
    if (answer.error !== undefined) return { ok: false, error: answer.error, transient: answer.transient === true };
    return this.vet([answer.address!, ...(Array.isArray(answer.others) ? answer.others.filter((other) => isIP(other)) : [])], cached ? 'cache' : 'dns');
  }

  /** Share of this process's cache reads that were hits: hits / (hits + misses); 0 before any. */
  hitRate(): number {
    const { hits, misses } = this.counts;
    return hits + misses === 0 ? 0 : hits / (hits + misses);
  }

  cacheCounts(): DnsCacheCounts {
    return { ...this.counts };
  }

  /** Resolves once no background refresh is running (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.refreshing.size > 0) await Promise.all(this.refreshing.values());
  }

  /** The addresses the crawl may reach, in order; refused when there is none (naming why the first was refused). */
  private vet(addresses: string[], source: ResolutionSource): Resolution {
    const allowed = addresses.filter((address) => this.policy.refusal(address) === undefined);
    if (allowed.length === 0) return { ok: false, error: this.policy.refusal(addresses[0])!, transient: false, refused: true };
    const [address, ...fallbacks] = allowed;
    return { ok: true, address, ...(fallbacks.length > 0 ? { fallbacks } : {}), source };
  }

  /** The cached entry, or undefined when there is none or it cannot be read (it is then looked up and overwritten). */
  private async read(name: string): Promise<CachedAnswer | undefined> {
    const raw = await this.cache.get(name);
    if (raw === null) return undefined;
    try {
      const entry = JSON.parse(raw) as CachedAnswer;
      if (typeof entry.error === 'string' || (typeof entry.address === 'string' && isIP(entry.address))) return entry;
    } catch {
      // Falls through: an unreadable entry is a miss.
    }
    this.events.warn({ event: 'dns-cache-unreadable', name, entry: raw.slice(0, 200) });
    return undefined;
  }

  /** Starts one background refresh of an answer in the last part of its TTL, unless one is running. */
  private refreshAhead(name: string, entry: CachedAnswer): void {
    const ratio = this.settings.refreshAheadRatio;
    if (ratio <= 0 || entry.address === undefined || typeof entry.expiresAt !== 'number' || typeof entry.ttlMs !== 'number') return;
    if (entry.expiresAt - Date.now() > entry.ttlMs * ratio) return;
    if (this.refreshing.has(name) || this.inflight.has(name)) return;
    const refresh = this.refresh(name)
      .catch((error: Error) => this.events.warn({ event: 'dns-refresh-failed', name, error: error.message }))
      .finally(() => this.refreshing.delete(name));
    this.refreshing.set(name, refresh);
  }

  private async refresh(name: string): Promise<void> {
    this.counts.refreshes++;
    await this.events.count('refresh');
    const answer = await this.query(name);
    this.events.refresh(answer.error === undefined ? 'ok' : 'failure');
    // A failed refresh leaves the answer in place until it expires; the lookup after that caches the failure.
    if (answer.error === undefined) await this.store(name, answer);
  }

  private lookupOnce(name: string): Promise<CachedAnswer> {
    let pending = this.inflight.get(name);
    if (!pending) {
      pending = this.lookup(name).finally(() => this.inflight.delete(name));
      this.inflight.set(name, pending);
    }
    return pending;
  }

  private async lookup(name: string): Promise<CachedAnswer> {
    return this.store(name, await this.query(name));
  }

  /**
   * One lookup at the resolver: A, then AAAA (every address of the name, IPv4 first). An AAAA failure after an A
   * answer only loses the IPv6 addresses; a name without A records (NODATA) is its AAAA answer. Never throws.
   */
  private async query(name: string): Promise<CachedAnswer> {
    const { minTtlMs, maxTtlMs, failureTtlMs } = this.settings;
    try {
      const v4 = await this.resolver.resolve4(name, { ttl: true }).catch((error: NodeJS.ErrnoException) => {
        // NXDOMAIN or a timeout would be the same for AAAA: only "no A record" (NODATA) is worth a second query.
        if (error.code !== 'ENODATA') throw error;
        return undefined;
      });
      const v6 = v4 === undefined ? await this.resolver.resolve6(name, { ttl: true }) : await this.resolver.resolve6(name, { ttl: true }).catch(() => []);
      const records = [...(v4 ?? []), ...v6];
      if (records.length === 0) throw Object.assign(new Error('no address'), { code: 'ENODATA' });
      const ttlSeconds = Math.min(...records.map((record) => record.ttl));
      const [first, ...others] = [...new Set(records.map((record) => record.address))];
      return { address: first, ...(others.length > 0 ? { others } : {}), ttlMs: Math.min(maxTtlMs, Math.max(minTtlMs, ttlSeconds * 1000)) };
    } catch (error) {
      this.counts.failures++;
      await this.events.count('failure');
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code ?? (error as Error).message;
      return { error: `DNS lookup of ${name} failed: ${reason}`, transient: code !== undefined && TRANSIENT_DNS_ERRORS.has(code), ttlMs: failureTtlMs };
    }
  }

  /** Caches the answer until its TTL runs out (a TTL under 1 ms is not cached at all). */
  private async store(name: string, answer: CachedAnswer): Promise<CachedAnswer> {
    const ttlMs = answer.ttlMs ?? 0;
    const entry: CachedAnswer = { ...answer, expiresAt: Date.now() + ttlMs };
    if (ttlMs >= 1) await this.cache.set(name, JSON.stringify(entry), ttlMs);
    return entry;
  }
}
