import { LingerBatcher } from '@crawler/batching';
import { createRedis, scanKeys, unlinkKeys, type RedisClient } from '@crawler/redis';
import { BATCH_MEMORY_MS } from './frontier-store';
import { PerIpAllowance } from './per-ip-allowance';
import type {
  Claim,
  ClaimOptions,
  Completion,
  FrontierCounts,
  FrontierWork,
  FrontierItem,
  FrontierShard,
  FrontierStats,
  FrontierStoreOptions,
  HostControls,
  HostInfo,
  KnownHosts,
  Looked,
  ScheduledItem,
  Turn,
  TurnOptions,
} from './frontier-store';
import { AUDIT, CLAIM, COMPLETE, COUNTS, END_TURN, ENQUEUE, PROMOTE, PRUNE, PURGE, RECLAIM, SET_CONTROLS, STATS, TAKE_TURN, WORK } from './frontier.lua';

/**
 * URLs per slice of a batch; an ENQUEUE call takes slices of any batches up to about this many URLs (under
 * twice as many at most), to keep each script short.
 */
export const ENQUEUE_SLICE = 2000;
/**
 * How long a slice waits for others to share its ENQUEUE call: the pages of an envelope reach the frontier
 * together, and their URLs, after the prioritizer's reads, within a few milliseconds.
 */
const ENQUEUE_LINGER_MS = 2;
/**
 * How long a completion waits for others to share its COMPLETE call: the outcomes of an envelope's fetches
 * reach the frontier together. A call's own commands (the heap's top, the crawl's counters) are then paid once
 * for them all, not once each.
 */
const COMPLETE_LINGER_MS = 2;
/** Completions in one COMPLETE call at most, to keep each script short. */
const COMPLETE_BATCH = 500;

/** One slice of a batch on its way to an ENQUEUE call: its head (batch id, number, URLs) and its URLs' arguments. */
interface EnqueueSlice {
  batchId: string;
  slice: number;
  urls: number;
  args: (string | number)[];
  now: number;
}

type Script = (...args: (string | number)[]) => Promise<unknown>;

/**
 * The shared frontier: every structure in Redis, every step one Lua script, so that frontier replicas and
 * restarts see one consistent state. Scripts compute their key names from the prefix and declare one of
 * them (`<prefix>init`) so a cluster client routes them: on a Redis Cluster the prefix must hold a hash tag
 * (one shard of a ShardedFrontierStore), which puts every key of the store in one slot.
 */
export class RedisFrontierStore implements FrontierShard {
  private readonly redis: RedisClient;
  private readonly prefix: string;
  /** The key every script declares. */
  private readonly routeKey: string;
  private readonly config: string;
  private readonly allowance: PerIpAllowance;
  private readonly slices: LingerBatcher<EnqueueSlice, Looked<number>>;
  /** Completions on their way to a COMPLETE call, each as the script's arguments for it. */
  private readonly completions: LingerBatcher<(string | number)[], Looked<boolean>>;
  private readonly scripts: Record<
    'enqueue' | 'claim' | 'complete' | 'reclaim' | 'controls' | 'purge' | 'prune' | 'promote' | 'audit' | 'stats' | 'counts' | 'work' | 'takeTurn' | 'endTurn',
    Script
  >;

  constructor(
    private readonly options: {
      /** REDIS_URL; or */
      url?: string;
      /** a client shared with other stores (the shards of one frontier), left open by close(). */
      client?: RedisClient;
      /** With `url`: told of the connection's errors (ioredis keeps reconnecting; without a listener it prints each one raw). */
      onError?: (error: Error) => void;
      prefix: string;
      /** Test seam: called after each slice of an enqueue is stored (a throw stands for a crash there). */
      afterSlice?: (slice: number) => void;
    },
    private readonly settings: FrontierStoreOptions,
  ) {
    if (!options.client && !options.url) throw new Error('RedisFrontierStore: needs a url or a client');
    // Lazy: every process has the store injected, only the frontier and the control plane use it.
    this.redis = options.client ?? createRedis(options.url!, { enableAutoPipelining: true, maxRetriesPerRequest: null, lazyConnect: true });
    if (!options.client) this.redis.on('error', options.onError ?? (() => undefined));
    this.prefix = `${options.prefix}:`;
    this.routeKey = `${this.prefix}init`;
    this.allowance = new PerIpAllowance(settings);
    this.config = JSON.stringify({
      n: settings.frontQueues,
      m: settings.backQueues,
      bias: settings.priorityBias,
      k: settings.perHostLimit,
      ipk: settings.perIpLimit,
      ipiv: settings.perIpIntervalMs,
      ipstep: this.allowance.domainsPerStep,
      ipmax: this.allowance.maxScale,
      al: settings.auditLength,
    });
    const define = (name: string, lua: string): Script => {
      this.redis.defineCommand(name, { lua, numberOfKeys: 1 });
      return (this.redis as unknown as Record<string, Script>)[name].bind(this.redis);
    };
    this.scripts = {
      enqueue: define('frontierEnqueue', ENQUEUE),
      claim: define('frontierClaim', CLAIM),
      complete: define('frontierComplete', COMPLETE),
      reclaim: define('frontierReclaim', RECLAIM),
      controls: define('frontierControls', SET_CONTROLS),
      purge: define('frontierPurge', PURGE),
      prune: define('frontierPrune', PRUNE),
      promote: define('frontierPromote', PROMOTE),
      audit: define('frontierAudit', AUDIT),
      stats: define('frontierStats', STATS),
      counts: define('frontierCounts', COUNTS),
      work: define('frontierWork', WORK),
      takeTurn: define('frontierTakeTurn', TAKE_TURN),
      endTurn: define('frontierEndTurn', END_TURN),
    };
    this.slices = new LingerBatcher((slices) => this.enqueueSlices(slices), {
      lingerMs: ENQUEUE_LINGER_MS,
      maxItems: Number.POSITIVE_INFINITY,
      maxBytes: ENQUEUE_SLICE,
      bytesOf: (slice) => slice.urls,
    });
    this.completions = new LingerBatcher((completions) => this.completeMany(completions), {
      lingerMs: COMPLETE_LINGER_MS,
      maxItems: COMPLETE_BATCH,
    });
  }

  private run(script: Script, now: number, ...args: (string | number)[]): Promise<unknown> {
    return script(this.routeKey, this.prefix, this.config, Math.random(), now, ...args);
  }

  async enqueue(items: FrontierItem[], now: number, batchId?: string): Promise<number> {
    return (await this.enqueueAndLook(items, now, batchId)).value;
  }

  async enqueueAndLook(items: FrontierItem[], now: number, batchId?: string): Promise<Looked<number>> {
    let added = 0;
    let dueAt: number | null = null;
    for (let i = 0, slice = 0; i < items.length || i === 0; i += ENQUEUE_SLICE, slice++) {
      const urls = items.slice(i, i + ENQUEUE_SLICE);
      const args = urls.flatMap(({ priority, host, item, hostLimit }) => {
        const p = Math.min(Math.max(priority, 0), this.settings.frontQueues - 1);
        return [p, host, item, limitArg(hostLimit)];
      });
      // Every slice names the batch and its own number: the batch record counts the slices enqueued, in the
      // same step, so a redelivery after a crash between two slices resumes at the first missing one.
      const answer = await this.slices.add({ batchId: batchId ?? '', slice, urls: urls.length, args, now });
      if (answer.value > 0) added += answer.value;
      dueAt = answer.dueAt;
      this.options.afterSlice?.(slice);
      if (items.length === 0) break;
    }
    return { value: added, dueAt };
  }

  /**
   * The slices sent at once, of any batches, in one script call: a call's own commands (the batch records
   * aside) are a dozen, its URLs' a few each, and a frontier handles the URLs of an envelope's pages, a few
   * each, all at once. Each slice is still recorded apart, in the same atomic step as its URLs. The call
   * runs at the latest `now` of its slices.
   */
  private enqueueSlices(slices: EnqueueSlice[]): Promise<Looked<number>[]> {
    const now = Math.max(...slices.map((s) => s.now));
    const heads = slices.flatMap((s) => [s.batchId, s.slice, s.urls]);
    const args = slices.flatMap((s) => s.args);
    return this.run(this.scripts.enqueue, now, this.settings.batchMemoryMs ?? BATCH_MEMORY_MS, slices.length, ...heads, ...args).then((reply) => {
      const { value: answers, dueAt } = lookedAt<number[]>(reply);
      return answers.map((value) => ({ value, dueAt }));
    });
  }

  async schedule(items: ScheduledItem[]): Promise<void> {
    if (!items.length) return;
    const args = items.flatMap(({ priority, host, item, dueAt }) => {
      const p = Math.min(Math.max(priority, 0), this.settings.frontQueues - 1);
      return [dueAt, `${p}\t${host}\t${item}`];
    });
    await this.redis.zadd(`${this.prefix}recrawl`, ...args);
  }

  async promoteDue(now: number, max: number): Promise<number> {
    return (await this.run(this.scripts.promote, now, max)) as number;
  }

  async claim(options: ClaimOptions): Promise<Claim[]> {
    return (await this.claimAndLook(options)).value;
  }

  async claimAndLook({ now, max, leaseMs }: ClaimOptions): Promise<Looked<Claim[]>> {
    const { value: rows, dueAt } = lookedAt<[string, string, string, string, number, number, string][]>(await this.run(this.scripts.claim, now, max, leaseMs));
    const claims = rows.map(([leaseId, host, item, ip, inFlight, ipIntervalMs, due]) => ({
      leaseId,
      host,
      item,
      ...(ip ? { ip, ipIntervalMs } : {}),
      inFlight,
      dueAt: Number(due),
    }));
    return { value: claims, dueAt };
  }

  async complete(leaseId: string, c: Completion, now: number): Promise<boolean> {
    return (await this.completeAndLook(leaseId, c, now)).value;
  }

  completeAndLook(leaseId: string, c: Completion, now: number): Promise<Looked<boolean>> {
    const audit = c.audit ?? [];
    return this.completions.add([
      now,
      leaseId,
      c.nextAt,
      c.requeue ?? '',
      c.ip ?? '',
      c.fetched ? '1' : '0',
      c.politeness ? JSON.stringify(c.politeness) : '',
      c.retryLater?.item ?? '',
      Math.min(Math.max(c.retryLater?.priority ?? 0, 0), this.settings.frontQueues - 1),
      c.retryLater?.dueAt ?? 0,
      c.site ?? '',
      // The ranges are matched here: a script cannot parse CIDRs cheaply.
      c.ip ? this.allowance.rangeRule(c.ip) : '',
      limitArg(c.hostLimit),
      audit.length,
      ...audit,
    ]);
  }

  /** The completions sent at once in one script call, at the latest `now` of them (each its own first argument). */
  private async completeMany(completions: (string | number)[][]): Promise<Looked<boolean>[]> {
    const now = Math.max(...completions.map(([at]) => Number(at)));
    const args = completions.flatMap(([, ...rest]) => rest);
    const { value: answers, dueAt } = lookedAt<number[]>(await this.run(this.scripts.complete, now, completions.length, ...args));
    return answers.map((answer) => ({ value: answer === 1, dueAt }));
  }

  async takeTurn(host: string, { now, ip, leaseMs }: TurnOptions): Promise<Turn> {
    const [id, a, b] = (await this.run(this.scripts.takeTurn, now, host, ip, leaseMs)) as [string, string | number, string];
    if (id === '') return { retryAt: Number(a) };
    return { leaseId: id, delayMs: a === '' ? null : Number(a), politeness: b ? JSON.parse(b) : undefined };
  }

  async endTurn(leaseId: string, nextAt: number, now: number): Promise<boolean> {
    return (await this.run(this.scripts.endTurn, now, leaseId, nextAt)) === 1;
  }

  async reclaimExpired(now: number, retryAt: number): Promise<number> {
    return (await this.run(this.scripts.reclaim, now, retryAt, '*')) as number;
  }

  async reclaimWhere(predicate: (claim: Claim) => boolean, now: number, retryAt: number): Promise<number> {
    const leases = await this.leaseRecords();
    const ids = [...leases]
      .filter(([leaseId, record]) => {
        const [, host, ip, ...rest] = record.split('\t');
        return predicate({ leaseId, host, ip: ip || undefined, item: rest.join('\t'), inFlight: 0 });
      })
      .map(([id]) => id);
    return ids.length ? ((await this.run(this.scripts.reclaim, now, retryAt, ...ids)) as number) : 0;
  }

  /** Every lease out, id → record: a key each (l:<id>), or, for a store written before, a field of `lease`. */
  private async leaseRecords(): Promise<Map<string, string>> {
    const records = new Map(Object.entries(await this.redis.hgetall(`${this.prefix}lease`)));
    const ids = await this.redis.zrange(`${this.prefix}leases`, 0, -1);
    for (let i = 0; i < ids.length; i += 1000) {
      const part = ids.slice(i, i + 1000);
      const values = await this.redis.mget(...part.map((id) => `${this.prefix}l:${id}`));
      part.forEach((id, n) => values[n] !== null && records.set(id, values[n]!));
    }
    return records;
  }

  async nextDueAt(): Promise<number | null> {
    const top = await this.redis.zrange(`${this.prefix}heap`, 0, 0, 'WITHSCORES');
    return top.length ? Number(top[1]) : null;
  }

  async nextScheduledAt(): Promise<number | null> {
    const top = await this.redis.zrange(`${this.prefix}recrawl`, 0, 0, 'WITHSCORES');
    return top.length ? Number(top[1]) : null;
  }

  async hostInfo(host: string): Promise<HostInfo> {
    const [h, j] = await Promise.all([this.redis.hgetall(`${this.prefix}h:${host}`), this.redis.hget(`${this.prefix}hostb`, host)]);
    const [queued, score] = j ? await Promise.all([this.redis.llen(`${this.prefix}b:${j}`), this.redis.zscore(`${this.prefix}heap`, j)]) : [0, null];
    const n = (v?: string) => (v === undefined ? null : Number(v));
    return {
      host,
      queued,
      inFlight: Number(h.inflight ?? 0),
      nextAt: score === null ? null : Number(score),
      fetched: Number(h.fetched ?? 0),
      ip: h.ip,
      delayMs: n(h.delay),
      blockedUntil: n(h.blocked),
      budget: n(h.budget),
      politeness: h.pol ? JSON.parse(h.pol) : undefined,
      ...(h.limit ? { hostLimit: Number(h.limit) } : {}),
    };
  }

  async knownHosts(after: string, limit: number): Promise<KnownHosts> {
    const key = `${this.prefix}hosts`;
    const [hosts, total] = await Promise.all([this.redis.zrangebylex(key, after ? `(${after}` : '-', '+', 'LIMIT', 0, limit), this.redis.zcard(key)]);
    return { hosts, total };
  }

  async politeness(host: string): Promise<Pick<HostInfo, 'politeness' | 'delayMs'>> {
    const [pol, delay] = await this.redis.hmget(`${this.prefix}h:${host}`, 'pol', 'delay');
    return { politeness: pol ? JSON.parse(pol) : undefined, delayMs: delay === null ? null : Number(delay) };
  }

  async counts(): Promise<FrontierCounts> {
    const [leased, fetched] = (await this.run(this.scripts.counts, 0)) as number[];
    return { leased, fetched };
  }

  async work(): Promise<FrontierWork> {
    const [size, scheduled, leased] = (await this.run(this.scripts.work, 0)) as number[];
    return { size, scheduled, leased };
  }

  async setHostControls(host: string, controls: HostControls, now: number): Promise<void> {
    await this.run(this.scripts.controls, now, host, JSON.stringify(controls));
  }

  async prune(maxFront: number): Promise<number> {
    return (await this.run(this.scripts.prune, 0, maxFront)) as number;
  }

  async purgeHost(host: string, now: number): Promise<number> {
    return (await this.run(this.scripts.purge, now, host)) as number;
  }

  async stats(): Promise<FrontierStats> {
    // One script, not a dozen commands: a sharded frontier reads every shard's figures for each status read.
    const [size, scheduled, free, init, hostsDue, leased, ...front] = (await this.run(this.scripts.stats, 0)) as number[];
    const backQueuesFree = init ? free : this.settings.backQueues;
    return { size, scheduled, front, backQueuesInUse: this.settings.backQueues - backQueuesFree, backQueuesFree, hostsDue, leased };
  }

  async audit(host: string, entries: string[]): Promise<void> {
    await this.auditMany(new Map([[host, entries]]));
  }

  async auditMany(byHost: ReadonlyMap<string, string[]>): Promise<void> {
    const args: (string | number)[] = [];
    for (const [host, entries] of byHost) if (entries.length) args.push(host, entries.length, ...entries);
    if (args.length) await this.run(this.scripts.audit, 0, ...args);
  }

  auditLog(host: string): Promise<string[]> {
    // The list runs up to half as long again before it is trimmed (appendAudit in prelude.lua): its tail is the log.
    return this.redis.lrange(`${this.prefix}audit:${host}`, -this.settings.auditLength, -1);
  }

  async clear(): Promise<void> {
    const pattern = `${this.prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    for await (const keys of scanKeys(this.redis, pattern)) await unlinkKeys(this.redis, keys);
  }

  async close(): Promise<void> {
    // Slices and completions waiting for their call are sent first (their callers are answered), while the
    // connection is open.
    await Promise.all([this.slices.flush(), this.completions.flush()]).catch(() => undefined);
    if (this.options.client) return;
    if (this.redis.status === 'wait') this.redis.disconnect();
    else await this.redis.quit();
  }
}

/** A host's own in-flight limit as the scripts take it (setLimit in prelude.lua): '' = as it was, '0' = the crawl's. */
function limitArg(limit: number | null | undefined): string {
  return limit === undefined ? '' : String(limit ?? 0);
}

/** A script's answer with the heap's earliest due time after it (withDueAt in prelude.lua). */
function lookedAt<T>(reply: unknown): Looked<T> {
  const [value, top] = reply as [T, string];
  return { value, dueAt: top === '' ? null : Number(top) };
}
