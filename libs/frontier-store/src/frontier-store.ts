/**
 * The URL frontier's state, after Mercator (Heydon & Najork) and the classic system-design diagram:
 *
 *   enqueue ─► front queues f0..fn-1 (priority) ─► router ─► back queues b0..bm-1 (one host each) ─► heap ─► claim
 *
 * - A URL waits in the front queue of its priority (0 = highest).
 * - The router fills an idle back queue: it pops front queues (picked at random, biased to high priority)
 *   until it finds a URL of a host that has no back queue, and gives that host the queue. URLs of hosts that
 *   already own a back queue are appended to it on the way.
 * - The heap orders back queues by the time their host may next be fetched. `claim` takes due hosts' next
 *   URLs under a lease; `complete` ends the lease and sets the host's next time (the politeness delay).
 * - A lease that is not completed in time expires and its URL goes back to its host (a downloader
 *   died): no URL is lost, and a host is never claimed while at its in-flight limit.
 *
 * Every operation is atomic (one Lua script in Redis), so any number of frontier replicas may share it.
 */
export interface FrontierItem {
  /** Politeness key: URL.host (hostname[:port]). */
  host: string;
  /** Front queue, 0 (highest priority) … frontQueues − 1. */
  priority: number;
  /** Opaque payload (the encoded URL entry); the store never parses it. */
  item: string;
  /**
   * The host's own in-flight limit (its site's `concurrency`), over perHostLimit from now on; null = back to
   * perHostLimit; absent = as it was. Written before the item is routed, so the host's first claim obeys it.
   */
  hostLimit?: number | null;
}

export interface Claim {
  leaseId: string;
  host: string;
  item: string;
  /** The host's last known address (reported by an earlier completion), if any. */
  ip?: string;
  /** Requests to this host in flight, this one included. */
  inFlight: number;
  /**
   * The gap the address is paced at now (the per-IP interval divided by its allowance, 0 on a CDN range): the
   * downloader keeps it between its own requests there. Absent when `ip` is.
   */
  ipIntervalMs?: number;
  /** When the host's turn came (its time in the heap), ms since epoch: the claim's `now` less this is how late it was handed out. */
  dueAt?: number;
}

export interface Completion {
  /** Earliest time (ms since epoch) the host may be fetched again. */
  nextAt: number;
  /** Put this item back at the head of the host's queue (robots-first turn, a 429/503 to retry). */
  requeue?: string;
  /**
   * Put this item back later: it is held (like a scheduled recrawl) until `dueAt`, then queued in front
   * queue `priority` like any URL, while the host's other URLs go on at its usual pace. A transient
   * failure's retry. Written in the same step as the completion, so no crash can end the lease and lose the
   * URL. Ignored when `requeue` is set.
   */
  retryLater?: { item: string; priority: number; dueAt: number };
  /** The address the request went to: hosts sharing it are paced together. */
  ip?: string;
  /**
   * The host's registrable domain (example.co.uk for www.example.co.uk): the per-IP allowance of `ip` grows with
   * the distinct ones reported on it (see perIpAllowance). Absent: the host counts as its own domain.
   */
  site?: string;
  /** Count one page against the host's budget. */
  fetched?: boolean;
  /** Politeness memory of the host, replaced as a whole (recent response times, backoff level, cause). */
  politeness?: HostPoliteness;
  /** Entries appended to the host's audit log, in the same step, when the completion counts. */
  audit?: string[];
  /** The host's own in-flight limit, as FrontierItem.hostLimit: a change of it counts from this completion on. */
  hostLimit?: number | null;
}

export interface HostPoliteness {
  /** Most recent response times, ms, newest last. */
  recentMs: number[];
  /** Consecutive 429/503 answers (exponential backoff level). */
  backoff: number;
  /** Consecutive requests that timed out with no response in between (the strike rule); absent = 0. */
  timeouts?: number;
  /** The delay decided at the last completion, and why. */
  delayMs: number;
  cause: string;
}

export interface HostControls {
  /** Overrides the computed delay between two requests (ms). */
  delayMs?: number | null;
  /** No request before this time (ms since epoch). */
  blockedUntil?: number | null;
  /** Pages this host may still be fetched in all; further URLs are dropped. */
  budget?: number | null;
}

export interface HostInfo extends HostControls {
  host: string;
  /** URLs waiting in the host's back queue (URLs still in front queues are not counted). */
  queued: number;
  inFlight: number;
  /** When the host may next be fetched (ms), null when it has no back queue. */
  nextAt: number | null;
  fetched: number;
  ip?: string;
  politeness?: HostPoliteness;
  /** The host's own in-flight limit (FrontierItem.hostLimit), when it has one; else perHostLimit holds. */
  hostLimit?: number;
}

export interface KnownHosts {
  hosts: string[];
  total: number;
}

export interface ScheduledItem extends Omit<FrontierItem, 'hostLimit'> {
  /** When the URL goes into its front queue (ms since epoch). */
  dueAt: number;
}

export interface FrontierStats {
  /** URLs in the frontier: queued (front and back) plus leased. */
  size: number;
  /** URLs held until their recrawl or retry time (not in `size`). */
  scheduled: number;
  front: number[];
  backQueuesInUse: number;
  backQueuesFree: number;
  hostsDue: number;
  leased: number;
}

/** What the dispatcher reads on every round, cheaply. */
export type FrontierWork = Pick<FrontierStats, 'size' | 'scheduled' | 'leased'>;

export interface FrontierCounts {
  /** URLs leased and not completed. */
  leased: number;
  /** Completions that counted a page (`Completion.fetched`), over the whole crawl. */
  fetched: number;
}

export interface ClaimOptions {
  now: number;
  max: number;
  /** A claim not completed within this long is returned to its host's queue. */
  leaseMs: number;
}

/**
 * A turn at a host without a URL: a request the crawler makes for a page it already has (a rendered page's
 * sub-request). It is held to the host's schedule exactly like a dispatched URL.
 */
export interface TurnOptions {
  now: number;
  /** The address the request goes to: the turn counts against its per-IP limit and interval. */
  ip: string;
  /** A turn not ended within this long ends by itself (its holder died) when expired leases are reclaimed. */
  leaseMs: number;
}

export type Turn =
  | {
      leaseId: string;
      /** The operator's delay override of the host, if any: what deciding the turn's own rest needs. */
      delayMs: number | null;
      /** The host's politeness memory (recent response times), if any. */
      politeness?: HostPoliteness;
    }
  /** Not now: the host or its address is resting or at its in-flight limit; ask again at `retryAt`. */
  | { leaseId?: undefined; retryAt: number };

export interface FrontierStore {
  /**
   * Refuses, by throwing, a store this process must not crawl on (a Redis frontier split into another number of
   * shards than its crawl keeps); an outage is not a refusal. Stores with nothing to check lack it.
   */
  open?(): Promise<void>;
  /**
   * Adds URLs to their front queues and fills idle back queues; answers how many this call added. A batch
   * id makes a redelivered message harmless: whatever part of the batch was already enqueued (within
   * batchMemoryMs) is not added again, and whatever part a crash cut off is, so a batch of any size ends
   * with every URL enqueued exactly once.
   */
  enqueue(items: FrontierItem[], now: number, batchId?: string): Promise<number>;
  /** Sets URLs aside until their recrawl time. */
  schedule(items: ScheduledItem[]): Promise<void>;
  /** Moves up to `max` URLs whose recrawl time has come into their front queues; answers how many. */
  promoteDue(now: number, max: number): Promise<number>;
  /** Leases up to `max` URLs of due hosts (each host's next URL), honouring the per-host and per-IP limits. */
  claim(options: ClaimOptions): Promise<Claim[]>;
  /** Ends a lease. Answers false when the lease was already ended (a replayed completion is harmless). */
  complete(leaseId: string, completion: Completion, now: number): Promise<boolean>;
  /** Returns expired leases' URLs to the head of their hosts' queues, and ends expired turns; answers how many. */
  reclaimExpired(now: number, retryAt: number): Promise<number>;
  /** Ends, as reclaimed, every lease matching `predicate` (e.g. held for a downloader that left). */
  reclaimWhere(predicate: (claim: Claim) => boolean, now: number, retryAt: number): Promise<number>;
  /**
   * Takes a turn at a host for a request that is no URL of the frontier, when a claim of the host's next URL
   * would be granted now as far as politeness goes: the host's next time has come (not blocked), it is under
   * its in-flight limit, and so is `ip` (limit and interval). A granted turn counts as a request in flight to
   * the host and the address, as a claim does, until `endTurn` (or its lease expires: `reclaimExpired`).
   * Answers at once; a refusal says when to ask again. No budget is spent: a turn is not a page.
   */
  takeTurn(host: string, options: TurnOptions): Promise<Turn>;
  /**
   * Ends a turn: the host may be claimed (or take a turn) again from `nextAt`, as after a completion. Answers
   * false when the turn had already ended (expired and reclaimed).
   */
  endTurn(leaseId: string, nextAt: number, now: number): Promise<boolean>;
  /** Earliest due time of any host with work, or null. */
  nextDueAt(): Promise<number | null>;
  /** Earliest due time of any URL set aside (a recrawl, a retry), or null: when `promoteDue` has work next. */
  nextScheduledAt(): Promise<number | null>;

  hostInfo(host: string): Promise<HostInfo>;
  /**
   * Names of the hosts the frontier has given a back queue, in byte order after `after` (exclusive), at most
   * `limit`, and how many there are in all: a page of a list that grows with the crawl.
   */
  knownHosts(after: string, limit: number): Promise<KnownHosts>;
  /** What deciding a host's next delay needs: its politeness memory and the operator's override (one read). */
  politeness(host: string): Promise<Pick<HostInfo, 'politeness' | 'delayMs'>>;
  counts(): Promise<FrontierCounts>;
  /**
   * The URLs still to do (`stats`' size, scheduled and leased), read alone: a completion check reads them on
   * every status, from every shard, and the rest of `stats` would double what that costs.
   */
  work(): Promise<FrontierWork>;
  setHostControls(host: string, controls: HostControls, now: number): Promise<void>;
  /**
   * Drops URLs from the tails of the lowest-priority front queues (the last queued of the least wanted first)
   * until at most `maxFront` wait in the front queues; answers how many were dropped. URLs already routed
   * to a host's back queue, leased or set aside are not counted and never dropped.
   */
  prune(maxFront: number): Promise<number>;
  /** Drops every URL of the host (queued now or arriving from the front queues later, until re-enabled). */
  purgeHost(host: string, now: number): Promise<number>;
  stats(): Promise<FrontierStats>;

  /** Appends to the host's politeness audit log (bounded, newest last). */
  audit(host: string, entries: string[]): Promise<void>;
  /** `audit` for many hosts in one step (one round trip). */
  auditMany(byHost: ReadonlyMap<string, string[]>): Promise<void>;
  auditLog(host: string): Promise<string[]>;

  clear(): Promise<void>;
  close(): Promise<void>;
}

/** A change's answer, with the earliest due time in the store's heap right after it (null: no host queued). */
export interface Looked<T> {
  value: T;
  dueAt: number | null;
}

/**
 * A store that can be one shard of a ShardedFrontierStore, which must know which shards have hosts due:
 * its changes answer the heap's earliest due time after them, read in the same atomic step.
 */
export interface FrontierShard extends FrontierStore {
  enqueueAndLook(items: FrontierItem[], now: number, batchId?: string): Promise<Looked<number>>;
  claimAndLook(options: ClaimOptions): Promise<Looked<Claim[]>>;
  completeAndLook(leaseId: string, completion: Completion, now: number): Promise<Looked<boolean>>;
}

export interface FrontierStoreOptions {
  /** Front queues (priorities). @defaultValue 8 */
  frontQueues: number;
  /** Back queues: hosts served at once. Mercator advises ~3× the fetch concurrency. @defaultValue 1024 */
  backQueues: number;
  /** Each front queue is this many times likelier to be picked than the next lower one. @defaultValue 2 */
  priorityBias: number;
  /** Audit entries kept per host. @defaultValue 10 */
  auditLength: number;
  /** How long a batch id is remembered against redelivery (FRONTIER_BATCH_MEMORY_MS). @defaultValue BATCH_MEMORY_MS */
  batchMemoryMs?: number;
  /** Requests in flight per host at most, but for a host given its own limit (FrontierItem.hostLimit). @defaultValue 1 */
  perHostLimit: number;
  /** Requests in flight per IP address at most, over all hosts on it. @defaultValue 8 */
  perIpLimit: number;
  /** Minimum gap between the starts of two requests to one IP address, over all hosts on it (ms). @defaultValue 100 */
  perIpIntervalMs: number;
  /**
   * An address's allowance (perIpLimit in flight, perIpIntervalMs apart) is multiplied by ⌈d / this⌉, d being the
   * distinct registrable domains reported on it (`Completion.site`). @defaultValue PER_IP_GROWTH.domainsPerStep
   */
  perIpDomainsPerStep?: number;
  /** The multiplier is at most this; 1 = the allowance never grows. @defaultValue PER_IP_GROWTH.maxScale */
  perIpMaxScale?: number;
  /** Address ranges (CIDRs) of CDN edges: no per-IP limit there, only the per-host ones. @defaultValue [] */
  perIpCdnCidrs?: readonly string[];
  /** Address ranges held to the base allowance however many domains they serve (wins over perIpCdnCidrs). @defaultValue [] */
  perIpStrictCidrs?: readonly string[];
}

/** How long a batch id is remembered by default: past any redelivery (a retry after an outage of QUEUE_INFRA_OUTAGE_MAX_MS, 10 min). */
export const BATCH_MEMORY_MS = 15 * 60_000;

export const FRONTIER_STORE = Symbol('FRONTIER_STORE');
