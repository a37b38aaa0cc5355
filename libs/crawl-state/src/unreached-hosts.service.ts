import { Inject, Injectable } from '@nestjs/common';
import { CRAWLER_CONFIG, type CrawlerConfig } from '@crawler/config';
import { hashBucketsFor, PartitionedHash, STATE_STORE, StateStore } from '@crawler/state';

/** Why no request could be sent to a host: its address is not one the crawl may reach, or its name did not resolve. */
export type UnreachedReason = 'address-refused' | 'dns-failed';

export interface UnreachedHosts {
  /** Hosts in all, and the first few, each with the error it met first. */
  hosts: number;
  first: { host: string; error: string }[];
}

/**
 * The hosts the crawl could not send a request to, by reason, shared through the state store (namespace
 * `unreached`, one hash per reason: host → the first error): what a crawl that fetched nothing, or left hosts
 * behind, names when it says why. One field per host, so it grows with the hosts that failed, not with pages:
 * still without bound in a wide crawl, so each hash is partitioned over a Redis Cluster's masters.
 */
@Injectable()
export class UnreachedHostsRegistry {
  private readonly byReason: Record<UnreachedReason, PartitionedHash>;

  constructor(@Inject(STATE_STORE) state: StateStore, @Inject(CRAWLER_CONFIG) config: CrawlerConfig) {
    const store = state.namespace('unreached');
    const buckets = hashBucketsFor(config.redisUrl);
    this.byReason = {
      'address-refused': new PartitionedHash(store, 'address-refused', buckets),
      'dns-failed': new PartitionedHash(store, 'dns-failed', buckets),
    };
  }

  async record(reason: UnreachedReason, host: string, error: string): Promise<void> {
    await this.byReason[reason].setIfAbsent(host, error.slice(0, 500));
  }

  async read(reason: UnreachedReason, first = 3): Promise<UnreachedHosts> {
    const all = Object.entries(await this.byReason[reason].getAll()).sort(([a], [b]) => a.localeCompare(b));
    return { hosts: all.length, first: all.slice(0, first).map(([host, error]) => ({ host, error })) };
  }
}
