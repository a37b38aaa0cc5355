import { Deque } from './deque';
import { DueHeap } from './due-heap';
import { SpillFile, SpillingQueue } from './spilling-queue';
import { BATCH_MEMORY_MS } from './frontier-store';
import { PerIpAllowance, type IpRangeRule } from './per-ip-allowance';
import type {
  Claim,
  ClaimOptions,
  Completion,
  FrontierCounts,
  FrontierWork,
  FrontierItem,
  FrontierStats,
  FrontierShard,
  FrontierStoreOptions,
  HostControls,
  HostInfo,
  HostPoliteness,
  KnownHosts,
  Looked,
  ScheduledItem,
  Turn,
  TurnOptions,
} from './frontier-store';

interface HostRecord {
  next: number;
  inFlight: number;
  fetched: number;
  ip?: string;
  delayMs?: number;
  blockedUntil?: number;
  budget?: number;
  politeness?: HostPoliteness;
  /** The host's own in-flight limit (FrontierItem.hostLimit), over perHostLimit. */
  limit?: number;
}

interface Lease {
  backQueue: number;
  host: string;
  /** The address counted at claim time ('' when the host's address was not known yet). */
  ip: string;
  item: string;
  expires: number;
}

interface IpRecord {
  next: number;
  inFlight: number;
  /** Distinct registrable domains reported on the address, up to PerIpAllowance.domainsKept. */
  domains: Set<string>;
  rule: IpRangeRule;
  /** The next free waiting slot of the address (see waitSlot). */
  wait: number;
}

/**
 * When a host held back by its busy address is looked at again: the address's next free waiting slot at or
 * after `earliest`, the slots one interval apart. Thousands of hosts behind one address wait in line for the
 * pace it can be asked at, each looked at again about when its turn can come, instead of all of them every
 * time the address might be free (a claim would otherwise pass over the same waiting hosts again and again,
 * more of them the further a crawl of shared addresses gets). The schedule only ever defers a host.
 */
function waitSlot(ip: IpRecord, earliest: number, interval: number): number {
  const slot = Math.max(earliest, ip.wait);
  ip.wait = slot + Math.max(interval, 1);
  return slot;
}

/** A turn taken at a host without a URL (takeTurn): what ending it undoes. */
interface TurnLease {
  host: string;
  ip: string;
  expires: number;
}

/** Front-queue items carry their host; back-queue items do not (the queue's host is known). */
interface Routed {
  host: string;
  item: string;
}

/** Redis compares member names byte by byte; so does this (not localeCompare). */
function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Items routed per call at most, so that one call cannot stall the frontier. */
const ROUTE_BATCH = 20_000;

/** Where the queued URLs beyond each queue's memory go (the embedded crawl's `--out/frontier`). */
export interface FrontierSpill {
  /** The spill file (created empty, or emptied). */
  file: string;
  /** Items a queue keeps in memory at either end, at most: FRONTIER_MEMORY_CHUNK_ITEMS. */
  chunkItems: number;
}

/**
 * The embedded frontier: the same algorithm as the Redis driver's Lua scripts, in process memory, its queued
 * URLs beyond a bounded number per queue spilled to a file when given one. The contract suite runs against
 * both drivers, so the two cannot drift apart.
 */
export class MemoryFrontierStore implements FrontierShard {
  private readonly front: SpillingQueue<Routed>[];
  private readonly back = new Map<number, SpillingQueue<string>>();
  private readonly spillFile?: SpillFile;
  private readonly hostOf = new Map<number, string>();
  private readonly queueOf = new Map<string, number>();
  private readonly heap = new DueHeap();
  private readonly free = new Deque<number>();
  private readonly leases = new Map<string, Lease>();
  private readonly turns = new Map<string, TurnLease>();
  private readonly hosts = new Map<string, HostRecord>();
  private readonly ips = new Map<string, IpRecord>();
  private readonly allowance: PerIpAllowance;
  private readonly audits = new Map<string, string[]>();
  /** Every host given a back queue, for the list of hosts (the Redis driver's `hosts` sorted set). */
  private readonly known = new Set<string>();
  private readonly batches = new Map<string, number>();
  private scheduled: ScheduledItem[] = [];
  private size = 0;
  /** Completions that counted a page. */
  private fetched = 0;
  private leaseSeq = 0;

  constructor(
    private readonly options: FrontierStoreOptions,
    private readonly spill?: FrontierSpill,
  ) {
    this.spillFile = spill && new SpillFile(spill.file);
    this.front = Array.from({ length: options.frontQueues }, () => this.newQueue<Routed>());
    this.allowance = new PerIpAllowance(options);
    for (let j = 0; j < options.backQueues; j++) this.free.push(j);
  }

  async enqueue(items: FrontierItem[], now: number, batchId?: string): Promise<number> {
    // One synchronous step, however large the batch: it is recorded and enqueued whole or not at all.
    if (batchId !== undefined) {
      if ((this.batches.get(batchId) ?? -Infinity) > now) return 0;
      this.forgetBatches(now);
      this.batches.set(batchId, now + (this.options.batchMemoryMs ?? BATCH_MEMORY_MS));
    }
    // Limits first: routing may put a host on the heap, and its first claim must see its own limit.
    for (const { host, hostLimit } of items) this.setLimit(host, hostLimit, now);
    for (const { host, priority, item } of items) {
      this.front[Math.min(Math.max(priority, 0), this.front.length - 1)].push({ host, item });
    }
    this.size += items.length;
    this.route(now);
    return items.length;
  }

  /** Batch ids past their memory, dropped (the oldest come first: ids are remembered in order). */
  private forgetBatches(now: number): void {
    for (const [id, until] of this.batches) {
      if (until > now) break;
      this.batches.delete(id);
    }
  }

  async schedule(items: ScheduledItem[]): Promise<void> {
    this.scheduled.push(...items);
  }

  async promoteDue(now: number, max: number): Promise<number> {
    const due = this.scheduled
      .filter((s) => s.dueAt <= now)
      .sort((a, b) => a.dueAt - b.dueAt)
      .slice(0, max);
    if (!due.length) return 0;
    const promoted = new Set(due);
    this.scheduled = this.scheduled.filter((s) => !promoted.has(s));
    await this.enqueue(due, now);
    return due.length;
  }

  async claim({ now, max, leaseMs }: ClaimOptions): Promise<Claim[]> {
    const { perIpLimit, perIpIntervalMs } = this.options;
    const out: Claim[] = [];
    for (let guard = 0; out.length < max && guard < max * 4 + 100; guard++) {
      const top = this.heap.peek();
      if (!top || top[0] > now) break;
      const j = top[1];
      this.heap.delete(j);
      const host = this.hostOf.get(j)!;
      const h = this.host(host);
      const queue = this.back.get(j)!;
      if ((h.blockedUntil ?? 0) > now) {
        this.heap.set(j, h.blockedUntil!);
        continue;
      }
      if (h.inFlight >= this.limitOf(h)) continue; // a completion puts it back
      if (h.budget !== undefined && h.fetched + h.inFlight >= h.budget) {
        this.size -= queue.length;
        queue.clear();
        if (h.inFlight === 0) this.release(j, host, now);
        continue;
      }
      const ip = h.ip ? this.ip(h.ip) : undefined;
      const scale = ip ? this.allowance.scale(ip.domains.size, ip.rule) : 1;
      const interval = scale === Infinity ? 0 : Math.floor(perIpIntervalMs / scale);
      if (ip && ip.inFlight >= perIpLimit * scale) {
        this.heap.set(j, waitSlot(ip, now + Math.max(interval, 50), interval));
        continue;
      }
      if (ip && ip.next > now) {
        this.heap.set(j, waitSlot(ip, ip.next, interval));
        continue;
      }
      const item = queue.shift();
      if (item === undefined) {
        if (h.inFlight === 0) this.release(j, host, now);
        continue;
      }
      h.inFlight++;
      if (ip) {
        ip.inFlight++;
        ip.next = now + interval;
      }
      const leaseId = String(++this.leaseSeq);
      this.leases.set(leaseId, { backQueue: j, host, ip: h.ip ?? '', item, expires: now + leaseMs });
      if (h.inFlight < this.limitOf(h) && queue.length > 0) this.heap.set(j, now);
      out.push({ leaseId, host, item, ip: h.ip, inFlight: h.inFlight, ...(h.ip ? { ipIntervalMs: interval } : {}), dueAt: top[0] });
    }
    return out;
  }

  async complete(leaseId: string, completion: Completion, now: number): Promise<boolean> {
    return this.finish(leaseId, completion, now);
  }

  async takeTurn(host: string, { now, ip: address, leaseMs }: TurnOptions): Promise<Turn> {
    const { perIpLimit, perIpIntervalMs } = this.options;
    const h = this.host(host);
    const ip = this.ip(address);
    // The checks of claim, in its order; a busy host or address is asked again as claim looks again at one.
    const due = Math.max(h.next, h.blockedUntil ?? 0);
    if (due > now) return { retryAt: due };
    // The address's allowance as the frontier knows it (its completions report its domains and range rule).
    const scale = this.allowance.scale(ip.domains.size, ip.rule);
    const interval = scale === Infinity ? 0 : Math.floor(perIpIntervalMs / scale);
    if (h.inFlight >= this.limitOf(h) || ip.inFlight >= perIpLimit * scale) return { retryAt: now + Math.max(interval, 50) };
    if (ip.next > now) return { retryAt: ip.next };
    h.inFlight++;
    ip.inFlight++;
    ip.next = now + interval;
    const leaseId = `t${++this.leaseSeq}`;
    this.turns.set(leaseId, { host, ip: address, expires: now + leaseMs });
    return { leaseId, delayMs: h.delayMs ?? null, politeness: h.politeness };
  }

  async endTurn(leaseId: string, nextAt: number, now: number): Promise<boolean> {
    const turn = this.turns.get(leaseId);
    if (!turn) return false;
    this.turns.delete(leaseId);
    const h = this.host(turn.host);
    h.inFlight--;
    this.ip(turn.ip).inFlight--;
    h.next = Math.max(h.next, nextAt);
    // A claim that found the host busy dropped its back queue from the heap: it is put back here, as a
    // completion would, or freed if it emptied meanwhile.
    const j = this.queueOf.get(turn.host);
    if (j === undefined) return true;
    if (this.back.get(j)!.length > 0) {
      if (h.inFlight < this.limitOf(h)) this.heap.set(j, Math.max(h.next, h.blockedUntil ?? 0));
    } else if (h.inFlight <= 0) {
      this.release(j, turn.host, now);
    }
    return true;
  }

  async reclaimExpired(now: number, retryAt: number): Promise<number> {
    let n = 0;
    for (const [id, lease] of [...this.leases]) {
      if (lease.expires <= now && this.finish(id, { nextAt: retryAt, requeue: lease.item }, now)) n++;
    }
    for (const [id, turn] of [...this.turns]) {
      if (turn.expires <= now && (await this.endTurn(id, retryAt, now))) n++;
    }
    return n;
  }

  async reclaimWhere(predicate: (claim: Claim) => boolean, now: number, retryAt: number): Promise<number> {
    let n = 0;
    for (const [leaseId, lease] of [...this.leases]) {
      const claim = { leaseId, host: lease.host, item: lease.item, ip: lease.ip || undefined, inFlight: this.host(lease.host).inFlight };
      if (predicate(claim) && this.finish(leaseId, { nextAt: retryAt, requeue: lease.item }, now)) n++;
    }
    return n;
  }

  // A memory step is synchronous: nothing runs between the change and the look.
  async enqueueAndLook(items: FrontierItem[], now: number, batchId?: string): Promise<Looked<number>> {
    return { value: await this.enqueue(items, now, batchId), dueAt: this.earliestDue() };
  }

  async claimAndLook(options: ClaimOptions): Promise<Looked<Claim[]>> {
    return { value: await this.claim(options), dueAt: this.earliestDue() };
  }

  async completeAndLook(leaseId: string, completion: Completion, now: number): Promise<Looked<boolean>> {
    return { value: await this.complete(leaseId, completion, now), dueAt: this.earliestDue() };
  }

  async nextDueAt(): Promise<number | null> {
    return this.earliestDue();
  }

  private earliestDue(): number | null {
    return this.heap.peek()?.[0] ?? null;
  }

  async nextScheduledAt(): Promise<number | null> {
    return this.scheduled.length ? Math.min(...this.scheduled.map((s) => s.dueAt)) : null;
  }

  async hostInfo(host: string): Promise<HostInfo> {
    const h = this.hosts.get(host);
    const j = this.queueOf.get(host);
    return {
      host,
      queued: j === undefined ? 0 : this.back.get(j)!.length,
      inFlight: h?.inFlight ?? 0,
      nextAt: j === undefined ? null : (this.heap.score(j) ?? null),
      fetched: h?.fetched ?? 0,
      ip: h?.ip,
      delayMs: h?.delayMs ?? null,
      blockedUntil: h?.blockedUntil ?? null,
      budget: h?.budget ?? null,
      politeness: h?.politeness,
      ...(h?.limit !== undefined ? { hostLimit: h.limit } : {}),
    };
  }

  async knownHosts(after: string, limit: number): Promise<KnownHosts> {
    const names = [...this.known].filter((host) => host > after).sort(byteOrder);
    return { hosts: names.slice(0, limit), total: this.known.size };
  }

  async politeness(host: string): Promise<Pick<HostInfo, 'politeness' | 'delayMs'>> {
    const h = this.hosts.get(host);
    return { politeness: h?.politeness, delayMs: h?.delayMs ?? null };
  }

  async counts(): Promise<FrontierCounts> {
    return { leased: this.leases.size, fetched: this.fetched };
  }

  async work(): Promise<FrontierWork> {
    return { size: this.size, scheduled: this.scheduled.length, leased: this.leases.size };
  }

  async setHostControls(host: string, controls: HostControls, now: number): Promise<void> {
    const h = this.host(host);
    if (controls.delayMs !== undefined) h.delayMs = controls.delayMs ?? undefined;
    if (controls.budget !== undefined) h.budget = controls.budget ?? undefined;
    if (controls.blockedUntil !== undefined) h.blockedUntil = controls.blockedUntil ?? undefined;
    const j = this.queueOf.get(host);
    if (j !== undefined && this.heap.has(j)) this.heap.set(j, Math.max(now, h.next, h.blockedUntil ?? 0));
  }

  async prune(maxFront: number): Promise<number> {
    let over = this.front.reduce((n, q) => n + q.length, 0) - maxFront;
    let dropped = 0;
    for (let i = this.front.length - 1; i >= 0 && over > 0; i--) {
      while (over > 0 && this.front[i].pop() !== undefined) {
        over--;
        dropped++;
      }
    }
    this.size -= dropped;
    return dropped;
  }

  async purgeHost(host: string, now: number): Promise<number> {
    const h = this.host(host);
    h.budget = h.fetched + h.inFlight;
    const j = this.queueOf.get(host);
    if (j === undefined) return 0;
    const queue = this.back.get(j)!;
    const dropped = queue.length;
    this.size -= dropped;
    queue.clear();
    this.heap.delete(j);
    if (h.inFlight === 0) this.release(j, host, now);
    return dropped;
  }

  async stats(): Promise<FrontierStats> {
    return {
      size: this.size,
      scheduled: this.scheduled.length,
      front: this.front.map((q) => q.length),
      backQueuesInUse: this.options.backQueues - this.free.length,
      backQueuesFree: this.free.length,
      hostsDue: this.heap.size,
      leased: this.leases.size,
    };
  }

  async audit(host: string, entries: string[]): Promise<void> {
    this.appendAudit(host, entries);
  }

  async auditMany(byHost: ReadonlyMap<string, string[]>): Promise<void> {
    for (const [host, entries] of byHost) this.appendAudit(host, entries);
  }

  private appendAudit(host: string, entries: string[]): void {
    const log = this.audits.get(host) ?? [];
    log.push(...entries);
    if (log.length > this.options.auditLength) log.splice(0, log.length - this.options.auditLength);
    this.audits.set(host, log);
  }

  async auditLog(host: string): Promise<string[]> {
    return [...(this.audits.get(host) ?? [])];
  }

  async clear(): Promise<void> {
    throw new Error('MemoryFrontierStore.clear: make a new store instead');
  }

  async close(): Promise<void> {
    this.spillFile?.close();
  }

  private newQueue<T>(): SpillingQueue<T> {
    return new SpillingQueue<T>(this.spillFile, this.spill?.chunkItems ?? Infinity);
  }

  private finish(leaseId: string, completion: Completion, now: number): boolean {
    const lease = this.leases.get(leaseId);
    if (!lease) return false;
    this.leases.delete(leaseId);
    const { backQueue: j, host } = lease;
    const h = this.host(host);
    h.inFlight--;
    if (lease.ip) this.ip(lease.ip).inFlight--;
    // The host's address as last reported. Its first request was already counted against it: a host of
    // unknown address is handed out only to have its address resolved (FetchRequest.resolveOnly).
    if (completion.ip) this.learnAddress(h, host, completion.ip, completion.site);
    h.next = Math.max(h.next, completion.nextAt);
    if (completion.fetched) {
      h.fetched++;
      this.fetched++;
    }
    if (completion.politeness) h.politeness = completion.politeness;
    if (completion.audit?.length) this.appendAudit(host, completion.audit);
    if (completion.hostLimit !== undefined) h.limit = completion.hostLimit ?? undefined;
    const queue = this.back.get(j)!;
    if (completion.requeue !== undefined) queue.unshift(completion.requeue);
    else this.size--;
    const later = completion.retryLater;
    if (completion.requeue === undefined && later) this.scheduled.push({ host, priority: later.priority, item: later.item, dueAt: later.dueAt });
    if (queue.length > 0) {
      if (h.inFlight < this.limitOf(h)) this.heap.set(j, Math.max(h.next, h.blockedUntil ?? 0));
    } else if (h.inFlight <= 0) {
      this.release(j, host, now);
    }
    return true;
  }

  /** The router: fills free back queues from the front queues (see FrontierStore). */
  private route(now: number): void {
    for (let moved = 0; this.free.length > 0 && moved < ROUTE_BATCH; moved++) {
      const pick = this.pickFront();
      if (pick === undefined) return;
      const { host, item } = this.front[pick].shift()!;
      const h = this.host(host);
      let j = this.queueOf.get(host);
      if (j === undefined) {
        j = this.free.shift()!;
        this.queueOf.set(host, j);
        this.known.add(host);
        this.hostOf.set(j, host);
        this.back.set(j, this.newQueue<string>());
        this.back.get(j)!.push(item);
        this.heap.set(j, Math.max(now, h.next, h.blockedUntil ?? 0));
        continue;
      }
      const queue = this.back.get(j)!;
      queue.push(item);
      if (queue.length === 1) this.wake(j, h, now);
    }
  }

  /** A back queue that was empty and just got URLs enters the heap, unless it is there already or its host has its limit in flight. */
  private wake(j: number, h: HostRecord, now: number): void {
    if (!this.heap.has(j) && h.inFlight < this.limitOf(h)) this.heap.set(j, Math.max(now, h.next, h.blockedUntil ?? 0));
  }

  private limitOf(h: HostRecord): number {
    return h.limit ?? this.options.perHostLimit;
  }

  /**
   * Sets a host's own in-flight limit (null: the crawl's again, undefined: as it was). A host kept off the heap
   * at its old limit goes back on if the new one leaves it room.
   */
  private setLimit(host: string, limit: number | null | undefined, now: number): void {
    if (limit === undefined) return;
    const known = this.hosts.get(host);
    if ((known?.limit ?? null) === limit) return;
    const h = known ?? this.host(host);
    h.limit = limit ?? undefined;
    const j = this.queueOf.get(host);
    if (j !== undefined && this.back.get(j)!.length > 0) this.wake(j, h, now);
  }

  /** A non-empty front queue, at random, queue i being `priorityBias` times likelier than queue i+1. */
  private pickFront(): number | undefined {
    let total = 0;
    for (let i = 0; i < this.front.length; i++) if (this.front[i].length > 0) total += this.options.priorityBias ** -i;
    if (total === 0) return undefined;
    let r = Math.random() * total;
    let pick: number | undefined;
    for (let i = 0; i < this.front.length; i++) {
      if (this.front[i].length === 0) continue;
      pick = i;
      r -= this.options.priorityBias ** -i;
      if (r <= 0) break;
    }
    return pick;
  }

  private release(j: number, host: string, now: number): void {
    this.back.get(j)?.clear();
    this.queueOf.delete(host);
    this.hostOf.delete(j);
    this.back.delete(j);
    this.heap.delete(j);
    this.free.push(j);
    this.route(now);
  }

  private host(host: string): HostRecord {
    let h = this.hosts.get(host);
    if (!h) this.hosts.set(host, (h = { next: 0, inFlight: 0, fetched: 0 }));
    return h;
  }

  /**
   * The host's address as last reported, its domain counted on it (once the host is first seen there) and the
   * address's range rule refreshed (the ranges may have changed since it was first seen, across a restart).
   */
  private learnAddress(h: HostRecord, host: string, address: string, site = host): void {
    const ip = this.ip(address);
    ip.rule = this.allowance.rangeRule(address);
    if (h.ip !== address && ip.domains.size < this.allowance.domainsKept) ip.domains.add(site);
    h.ip = address;
  }

  private ip(address: string): IpRecord {
    let ip = this.ips.get(address);
    if (!ip) this.ips.set(address, (ip = { next: 0, inFlight: 0, domains: new Set(), rule: '', wait: 0 }));
    return ip;
  }
}
