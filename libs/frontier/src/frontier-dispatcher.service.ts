import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { Claim, FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { DownloaderMembership, HashRing } from '@crawler/hash-ring';
import { LOGGER, Logger } from '@crawler/logging';
import { CrawlClock, PauseSwitch } from '@crawler/crawl-state';
import { CrawlStats, Pipeline, RedisMemoryGauge } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { urlFingerprint } from '@crawler/url';
import { DispatchLateness } from './dispatch-lateness.metric';
import { DispatchRoom } from './dispatch-room';
import { DispatchSignal } from './dispatch-signal';
import { decodeEntry } from './frontier-entry';

/** Longest sleep between two looks at the heap (another replica may have made a host due meanwhile). */
const MAX_IDLE_MS = 200;
/** URLs claimed per store call. */
const CLAIM_BATCH = 500;
/** How often expired leases are looked for and the ring refreshed. */
const MAINTENANCE_MS = 1000;
/**
 * A gap this long between two reads of the ring means the dispatcher could not see it meanwhile (the store
 * failed over or stalled, or this process did): the downloaders may not have been able to beat either.
 */
const BLIND_AFTER_MS = 2 * MAINTENANCE_MS;
/** How often the ring is looked at while it has no member (a crawl's start: the downloaders are joining). */
const EMPTY_RING_MS = 50;
/** Due recrawls and retries moved into the front queues per tick at most. */
const RECRAWL_BATCH = 10_000;
/** What a round answers when the leases out leave no room (FRONTIER_MAX_IN_FLIGHT): nothing claimed, nothing looked at. */
const NO_ROOM = -1;

/**
 * Hands due hosts' URLs to downloaders. The heap is a schedule, not a queue: nothing is pushed when a
 * host becomes due, so the dispatcher sleeps until the earliest due time (or until woken by new work),
 * claims what is due under leases, and sends each URL towards the downloader that owns its host on the
 * hash ring. Claims are atomic in the store, so several dispatchers (frontier replicas) may run at once.
 */
/** How often the crawl's byte count is read for FRONTIER_MAX_BYTES, at most. */
const BYTES_READ_MS = 250;

@Injectable()
export class FrontierDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private running = false;
  private loop?: Promise<void>;
  private ring = new HashRing();
  private readonly membership: DownloaderMembership;
  private lastMaintenance = 0;
  /** When the ring was last read, and since when without a blind gap (departures need watching that long). */
  private lastRingRead = 0;
  private watchingSince = 0;
  /** Whether the last tick found the crawl paused (to log the change once). */
  private paused = false;
  private readonly room: DispatchRoom;
  /** Whether the time limit was found reached (logged and counted once per process). */
  private timeUp = false;
  /** FRONTIER_MAX_BYTES reached (see pastByteBudget), and when the totals were last read for it. */
  private bytesSpent = false;
  private bytesReadAt = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(FRONTIER_STORE) private readonly store: FrontierStore,
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly pipeline: Pipeline,
    private readonly stats: CrawlStats,
    private readonly signal: DispatchSignal,
    private readonly pause: PauseSwitch,
    private readonly redisMemory: RedisMemoryGauge,
    private readonly lateness: DispatchLateness,
    private readonly clock: CrawlClock,
  ) {
    this.room = new DispatchRoom(store, config.frontier, signal);
    this.membership = new DownloaderMembership(state.namespace('downloaders'), { heartbeatMs: config.downloader.heartbeatMs });
  }

  onApplicationBootstrap() {
    this.running = true;
    this.loop = this.run();
  }

  async onApplicationShutdown() {
    this.running = false;
    this.signal.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const claimed = await this.tick();
        // No room: nothing to claim until a lease ends, which wakes the loop (another replica's ends are seen at
        // the next read of the counts), so the heap's next due time is not read.
        if (claimed === NO_ROOM) await this.signal.sleep(MAX_IDLE_MS);
        else if (claimed < CLAIM_BATCH) await this.signal.sleep(await this.idleFor());
      } catch (error) {
        this.logger.error({ event: 'dispatch-failed', err: error }, 'dispatcher tick failed; retrying');
        await this.signal.sleep(1000);
      }
    }
  }

  /**
   * One round: maintenance when due, then claim and send. Answers how many URLs were dispatched, or NO_ROOM.
   * The room is looked at first, from counts read at most once a second: a frontier is woken by every lease
   * that ends, the ends of one call reach it together, and the first round takes all the room they made, so
   * most rounds find none and ask Redis nothing more.
   */
  private async tick(): Promise<number> {
    const now = Date.now();
    if (now - this.lastMaintenance >= (this.ring.size === 0 ? EMPTY_RING_MS : MAINTENANCE_MS)) await this.maintain(now);
    if (this.ring.size === 0) return 0;
    const room = await this.room.room(now);
    if (room === 'budget-spent') {
      await this.stats.count('frontier.budget-spent');
      return 0;
    }
    if (room <= 0) return NO_ROOM;
    // Due recrawls, and URLs whose retry after a transient failure has come.
    await this.store.promoteDue(now, RECRAWL_BATCH);
    if (await this.isPaused()) return 0;
    // A Redis near its memory limit would refuse the writes of what a dispatch sets off: intake waits for
    // memory instead (RedisMemoryGauge logs the pause and the resume).
    if (await this.redisMemory.isFull()) return 0;
    if (await this.pastTimeLimit(now)) return 0;
    if (await this.pastByteBudget(now)) return 0;
    const claims = await this.store.claim({ now, max: Math.min(room, CLAIM_BATCH), leaseMs: this.config.frontier.leaseMs });
    this.room.claimed(claims.length);
    if (claims.length && this.config.frontier.maxTimeMs > 0) await this.clock.start(now);
    this.lateness.observe(claims, now);
    const audits = new Map<string, string[]>();
    await Promise.all(claims.map((claim) => this.send(claim, audits)));
    await this.store.auditMany(audits);
    return claims.length;
  }

  /**
   * FRONTIER_MAX_TIME_MS: past it from the crawl's first dispatch (CrawlClock), nothing more is claimed. What is
   * in flight finishes as usual and every URL stays where it is, so the crawl can go on with a longer limit.
   */
  private async pastTimeLimit(now: number): Promise<boolean> {
    const { maxTimeMs } = this.config.frontier;
    if (maxTimeMs <= 0) return false;
    if (this.timeUp) return true;
    const startedAt = await this.clock.startedAt();
    if (startedAt === null || now < startedAt + maxTimeMs) return false;
    this.timeUp = true;
    await this.stats.count('frontier.time-limit');
    this.logger.info(
      { event: 'time-limit', startedAt, maxTimeMs },
      `time limit reached (FRONTIER_MAX_TIME_MS ${maxTimeMs} ms since ${new Date(startedAt).toISOString()}): dispatching nothing more`,
    );
    return true;
  }

  /**
   * FRONTIER_MAX_BYTES: once the crawl's body bytes (`bytes.fetched`, every downloader's) reach it, nothing more is
   * claimed, as with FRONTIER_MAX_PAGES: what is in flight finishes and every URL stays where it is. The totals
   * are read every BYTES_READ_MS at most (a read is every counter of the crawl).
   */
  private async pastByteBudget(now: number): Promise<boolean> {
    const { maxBytes } = this.config.frontier;
    if (maxBytes <= 0) return false;
    if (this.bytesSpent) return true;
    if (now >= this.bytesReadAt && now - this.bytesReadAt < BYTES_READ_MS) return false;
    this.bytesReadAt = now;
    const fetched = (await this.stats.totals())['bytes.fetched'] ?? 0;
    if (fetched < maxBytes) return false;
    this.bytesSpent = true;
    await this.stats.count('frontier.byte-budget-spent');
    this.logger.info(
      { event: 'byte-budget-spent', fetched, maxBytes },
      `byte budget spent (FRONTIER_MAX_BYTES ${maxBytes}, ${fetched} fetched): dispatching nothing more`,
    );
    return true;
  }

  /**
   * The crawl-wide pause switch, read before every claim: while it is set nothing is dispatched (leases
   * already out finish normally, new URLs keep queueing, maintenance goes on).
   */
  private async isPaused(): Promise<boolean> {
    const paused = await this.pause.isPaused();
    if (paused !== this.paused)
      this.logger.info({ event: paused ? 'dispatch-paused' : 'dispatch-resumed' }, paused ? 'crawl paused: dispatching nothing' : 'crawl resumed');
    this.paused = paused;
    return paused;
  }

  /** Sends the claimed URL on; its audit entry joins `audits`, written once for the whole claim. */
  private async send(claim: Claim, audits: Map<string, string[]>): Promise<void> {
    const entry = decodeEntry(claim.item);
    // Dated before the send: its acknowledgement can come after the fetch it starts has completed.
    const at = Date.now();
    await this.pipeline.send(QueueName.DnsResolve, {
      ...entry,
      v: SCHEMA_VERSION,
      leaseId: claim.leaseId,
      leaseExpiresAt: Date.now() + this.config.frontier.leaseMs,
      fetchId: urlFingerprint(entry.url),
      host: claim.host,
      shard: this.ring.owner(claim.host) ?? undefined,
      // A host whose address the store does not know yet: resolve it first, and count the host's first
      // request against that address (shared hosting: many new hosts, one server).
      ...(claim.ip === undefined ? { resolveOnly: true } : {}),
      ...(claim.ipIntervalMs === undefined ? {} : { ipIntervalMs: claim.ipIntervalMs }),
    });
    const entries = audits.get(claim.host) ?? [];
    entries.push(JSON.stringify({ at, event: 'dispatch', url: entry.url, inFlight: claim.inFlight }));
    audits.set(claim.host, entries);
  }

  /**
   * Refreshes the ring from the downloaders' heartbeats. The leases of a downloader that vanished go back to
   * their hosts, not before a fetch it might still be making has surely timed out; those of one that left
   * drained (nothing in flight) at once, paced as an expired lease is. A member whose heartbeat is stale
   * only counts as gone once the ring has been watched without a gap for a whole expiry: after a store
   * outage every heartbeat is stale, and the downloaders get that long to beat again, instead of all their
   * leases being handed out a second time. So while Redis is full: it answers the reads but refuses the
   * heartbeats (OOM), and a live downloader would look gone.
   */
  private async maintain(now: number): Promise<void> {
    this.lastMaintenance = now;
    const before = this.ring;
    const { live, drained } = await this.membership.view();
    const readAt = Date.now();
    if (readAt - this.lastRingRead > BLIND_AFTER_MS || (await this.redisMemory.isFull())) this.watchingSince = readAt;
    this.lastRingRead = readAt;
    const watched = readAt - this.watchingSince >= this.membership.expireAfterMs;
    const members = watched ? live : [...new Set([...before.members(), ...live])].filter((m) => !drained.includes(m));
    this.ring = new HashRing(members, { virtualNodes: before.virtualNodes });
    const gone = before.members().filter((m) => !this.ring.has(m));
    if (gone.length) {
      const left = gone.filter((m) => drained.includes(m));
      const vanished = gone.filter((m) => !drained.includes(m));
      const ownedBy = (ids: string[]) => (c: Claim) => ids.includes(before.owner(c.host) ?? '');
      const handedOn = left.length ? await this.store.reclaimWhere(ownedBy(left), now, now + this.config.frontier.minDelayMs) : 0;
      const reclaimed = vanished.length ? await this.store.reclaimWhere(ownedBy(vanished), now, now + this.config.downloader.totalTimeoutMs) : 0;
      this.logger.warn({ event: 'downloaders-left', gone, drained: left, reclaimed: handedOn + reclaimed }, 'downloaders left the ring');
      // Counted: a live downloader presumed gone (missed heartbeats) makes these URLs be fetched twice.
      if (reclaimed) await this.stats.count('frontier.ring-reclaimed', reclaimed);
    }
    const added = this.ring.members().filter((m) => !before.has(m));
    if (added.length) this.logger.info({ event: 'downloaders-joined', added, members: this.ring.size }, 'downloaders joined the ring');
    const expired = await this.store.reclaimExpired(now, now + this.config.frontier.minDelayMs);
    if (expired) await this.stats.count('frontier.leases-expired', expired);
  }

  private async idleFor(): Promise<number> {
    if (this.ring.size === 0) return EMPTY_RING_MS;
    const due = await this.store.nextDueAt();
    return due === null ? MAX_IDLE_MS : Math.min(MAX_IDLE_MS, Math.max(1, due - Date.now()));
  }
}
