import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { STATE_STORE, StateStore } from '@crawler/state';
import { isNonPublicAddress } from './address-policy';

export type Resolution = { ok: true; address: string; source: 'literal' | 'hosts' | 'cache' | 'dns' } | { ok: false; error: string };

interface CachedAnswer {
  address?: string;
  error?: string;
}

/**
 * Name → vetted address. Static hosts map first, then the shared cache (state store, so every replica
 * benefits), then DNS; answers are cached for their TTL clamped to [minTtl, maxTtl], failures briefly.
 * Concurrent lookups of one name in a process share one query. Non-public addresses are refused unless
 * allowed.
 */
@Injectable()
export class DnsResolverService {
  private readonly cache: StateStore;
  private readonly inflight = new Map<string, Promise<CachedAnswer>>();

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
  ) {
    this.cache = state.namespace('dns');
  }

  async resolve(hostname: string): Promise<Resolution> {
    const name = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (isIP(name)) return this.vet(name, 'literal');
    const pinned = Object.hasOwn(this.config.dns.hosts, name) ? this.config.dns.hosts[name] : undefined;
    if (pinned) return this.vet(pinned, 'hosts');
    const cached = await this.cache.get(name);
    const answer: CachedAnswer = cached ? JSON.parse(cached) : await this.lookupOnce(name);
    if (answer.error) return { ok: false, error: answer.error };
    return this.vet(answer.address!, cached ? 'cache' : 'dns');
  }

  private vet(address: string, source: 'literal' | 'hosts' | 'cache' | 'dns'): Resolution {
    if (!this.config.dns.allowPrivate && isNonPublicAddress(address)) {
      return { ok: false, error: `address ${address} is not public (allow with DNS_ALLOW_PRIVATE / --allow-private)` };
    }
    return { ok: true, address, source };
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
    const { minTtlMs, maxTtlMs, failureTtlMs } = this.config.dns;
    let answer: CachedAnswer;
    let ttlMs = failureTtlMs;
    try {
      const records = await dns.resolve4(name, { ttl: true }).catch(() => dns.resolve6(name, { ttl: true }));
      const first = records[0];
      answer = { address: first.address };
      ttlMs = Math.min(maxTtlMs, Math.max(minTtlMs, first.ttl * 1000));
    } catch (error) {
      answer = { error: `DNS lookup of ${name} failed: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
    }
    await this.cache.set(name, JSON.stringify(answer), ttlMs);
    return answer;
  }
}
