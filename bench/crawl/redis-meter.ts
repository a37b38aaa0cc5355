import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { addressOf, createRedis, isCluster, type RedisClient } from '@crawler/redis';
import { type CommandMonitor, monitorCommands } from '@crawler/redis/testing';
import type { CommandStat, RedisFigures, RedisNodeFigures } from '../report/results';
import { CommandAttribution } from './redis-breakdown';

/** A Redis server the meter reads: the one node, or a cluster's master or replica. */
export interface RedisServer {
  address: string;
  role: 'node' | 'master' | 'replica';
  /** Its process id (it runs on this machine), to sample its CPU and memory from /proc. */
  pid: number;
}

type Info = Record<string, number> & { redis_version?: string; role?: string };

interface Watched {
  address: string;
  role: RedisServer['role'];
  connection: Redis;
  before?: Info;
  commandsBefore?: Map<string, CommandStat>;
  peak: number;
}

/** What the meter sends each monitored server at the end of a run: its monitor has reported everything before. */
const MONITOR_END = 'redis-meter:end';
const MONITOR_END_WAIT_MS = 5000;

/** Redis commands that took the most of its time, a profile of what the crawl asks of it. */
const TOP_COMMANDS = 15;

/**
 * Redis's own figures over a run, read from INFO: memory (Δ and peak), commands processed (and which took its
 * time), CPU. On a cluster every master is read and the figures summed, each master's kept too; replicas
 * (they replay every write) are read for their CPU and commands, reported apart from the masters'.
 */
export class RedisMeter {
  private readonly client: RedisClient;
  private watched: Watched[] = [];
  private timer?: NodeJS.Timeout;
  private monitors: { server: Watched; monitor: CommandMonitor; ends: EventEmitter }[] = [];
  private attribution?: CommandAttribution;

  /**
   * `scripts`: the names of the crawl's scripts by SHA1 (scriptNames). Given, the run's commands are also told
   * apart by where they came from, with MONITOR on every master: exact, but the monitor slows Redis.
   */
  constructor(
    url: string,
    private readonly scripts?: Map<string, string>,
  ) {
    this.client = createRedis(url, { maxRetriesPerRequest: 3 });
  }

  async version(): Promise<string> {
    const [first] = await this.connections();
    return String((await info(first.connection)).redis_version ?? '');
  }

  /**
   * "1 node, AOF off", "3 masters + 3 replicas, AOF on": what a run's Redis was, since replicas and the
   * append-only file cost CPU on the same cores, and a comparison holds only between alike setups.
   */
  async describe(): Promise<string> {
    const all = await Promise.all((await this.connections()).map(async (w) => ({ role: w.role, aof: (await info(w.connection)).aof_enabled === 1 })));
    const masters = all.filter((s) => s.role !== 'replica').length;
    const replicas = all.length - masters;
    const aof = all.every((s) => s.aof) ? 'AOF on' : all.some((s) => s.aof) ? 'AOF on some' : 'AOF off';
    const shape = all[0].role === 'node' ? '1 node' : `${masters} masters + ${replicas} replicas`;
    return `${shape}, ${aof}`;
  }

  /** Every server the meter reads, with its process id. */
  async servers(): Promise<RedisServer[]> {
    return Promise.all((await this.connections()).map(async (w) => ({ address: w.address, role: w.role, pid: Number((await info(w.connection)).process_id) })));
  }

  async start(): Promise<void> {
    this.watched = await this.connections();
    if (this.scripts) {
      const attribution = (this.attribution = new CommandAttribution(this.scripts));
      this.monitors = await Promise.all(
        this.watched
          .filter((w) => w.role !== 'replica')
          .map(async (w) => {
            const ends = new EventEmitter();
            const monitor = await monitorCommands(w.connection.options, ({ args, source }) => {
              if (args[0] === 'echo' && args[1] === MONITOR_END) ends.emit(MONITOR_END);
              else attribution.see(w.address, args, source === 'lua');
            });
            return { server: w, monitor, ends };
          }),
      );
    }
    for (const w of this.watched) {
      w.before = await info(w.connection);
      w.commandsBefore = await commandStats(w.connection);
      w.peak = w.before.used_memory;
    }
    this.timer = setInterval(() => {
      for (const w of this.watched)
        void info(w.connection).then(
          (i) => (w.peak = Math.max(w.peak, i.used_memory)),
          () => undefined,
        );
    }, 500);
  }

  async stop(): Promise<RedisFigures> {
    clearInterval(this.timer);
    const nodes = await Promise.all(this.watched.map(async (w) => figures(w, await info(w.connection))));
    const topCommands = await this.topCommands();
    await this.endMonitors();
    const bySource = this.attribution ? { bySource: this.attribution.result() } : {};
    const [first] = nodes;
    if (this.watched[0].role === 'node')
      return { usedMemoryDelta: first.usedMemoryDelta, peakUsedMemory: first.peakUsedMemory, commands: first.commands, cpuMs: first.cpuMs, topCommands, ...bySource };
    const masters = nodes.filter((n) => n.role === 'master');
    const sum = (of: RedisNodeFigures[], key: 'usedMemoryDelta' | 'peakUsedMemory' | 'commands' | 'cpuMs') => of.reduce((n, f) => n + f[key], 0);
    return {
      usedMemoryDelta: sum(masters, 'usedMemoryDelta'),
      // Each master's own peak, summed: they need not peak at the same moment, so an upper bound.
      peakUsedMemory: sum(masters, 'peakUsedMemory'),
      commands: sum(masters, 'commands'),
      cpuMs: sum(masters, 'cpuMs'),
      replicaCpuMs: sum(
        nodes.filter((n) => n.role === 'replica'),
        'cpuMs',
      ),
      nodes,
      topCommands,
      ...bySource,
    };
  }

  /** INFO commandstats Δ over the run, summed over the masters (the node), the costliest first. */
  private async topCommands(): Promise<CommandStat[]> {
    const total = new Map<string, CommandStat>();
    for (const w of this.watched.filter((x) => x.role !== 'replica')) {
      for (const [command, after] of await commandStats(w.connection)) {
        const before = w.commandsBefore?.get(command);
        const sum = total.get(command) ?? { command, calls: 0, usec: 0 };
        sum.calls += after.calls - (before?.calls ?? 0);
        sum.usec += after.usec - (before?.usec ?? 0);
        total.set(command, sum);
      }
    }
    return [...total.values()]
      .filter((c) => c.calls > 0)
      .sort((a, b) => b.usec - a.usec)
      .slice(0, TOP_COMMANDS);
  }

  /**
   * A monitor reports a command after the server ran it: each server is sent a marker (ECHO), and its monitor
   * read up to the marker, so the run's last commands are counted too.
   */
  private async endMonitors(): Promise<void> {
    await Promise.all(
      this.monitors.map(async ({ server, monitor, ends }) => {
        const seen = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, MONITOR_END_WAIT_MS);
          ends.once(MONITOR_END, () => {
            clearTimeout(timer);
            resolve();
          });
        });
        await server.connection.echo(MONITOR_END);
        await seen;
        monitor.stop();
      }),
    );
    this.monitors = [];
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.monitors.forEach(({ monitor }) => monitor.stop());
    await this.client.quit();
  }

  /** The one node, or every master and replica of the cluster (its connections to them; role from INFO). */
  private async connections(): Promise<Watched[]> {
    if (!isCluster(this.client)) return [{ address: addressOf(this.client), role: 'node', connection: this.client, peak: 0 }];
    if (this.client.nodes('master').length === 0) await this.client.ping();
    const all = await Promise.all(
      this.client.nodes('all').map(async (connection) => ({
        address: addressOf(connection),
        role: (await info(connection)).role === 'master' ? ('master' as const) : ('replica' as const),
        connection,
        peak: 0,
      })),
    );
    return all.sort((a, b) => a.role.localeCompare(b.role) || a.address.localeCompare(b.address));
  }
}

function figures(w: Watched, after: Info): RedisNodeFigures {
  const b = w.before!;
  return {
    address: w.address,
    role: w.role === 'replica' ? 'replica' : 'master',
    usedMemoryDelta: after.used_memory - b.used_memory,
    peakUsedMemory: Math.max(w.peak, after.used_memory),
    // INFO itself is a command; the meter's own polls are a few per second, left in.
    commands: after.total_commands_processed - b.total_commands_processed,
    cpuMs: Math.round((after.used_cpu_sys + after.used_cpu_user - b.used_cpu_sys - b.used_cpu_user) * 1000),
  };
}

/** `INFO commandstats`: calls and µs per command (a script's inner calls counted under their own names too). */
async function commandStats(connection: Redis): Promise<Map<string, CommandStat>> {
  const stats = new Map<string, CommandStat>();
  for (const match of (await connection.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(match[1], { command: match[1], calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

async function info(connection: Redis): Promise<Info> {
  const text = await connection.info();
  const out: Record<string, number> = {};
  for (const line of text.split('\r\n')) {
    const [key, value] = line.split(':');
    if (value === undefined) continue;
    const n = Number(value);
    out[key] = Number.isFinite(n) ? n : (value as unknown as number);
  }
  return out;
}
