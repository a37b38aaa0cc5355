import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './temp-dirs';

/**
 * The local Redis Cluster the cluster tests run on: 3 masters and 3 replicas, started by
 * `scripts/redis-cluster.sh start` (`.ci/run` does it and sets REDIS_CLUSTER_URL).
 */
export const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';

const run = promisify(execFile);
const SCRIPT = join(__dirname, '../../scripts/redis-cluster.sh');

/**
 * A Redis Cluster a test owns (3 masters + 3 replicas on ports `firstPort` … `firstPort`+5), for tests that
 * reconfigure or stop nodes, which the shared one must never see. Each test file that starts one names its
 * own `block` of ports (`npm test` runs two files at once): block n starts at PRIVATE_REDIS_CLUSTER_PORT (7400)
 * + 10 n.
 */
export class PrivateRedisCluster {
  readonly dir = tempDir('redis-cluster-private-');
  url = '';
  readonly firstPort: number;
  constructor(block: number) {
    this.firstPort = Number(process.env.PRIVATE_REDIS_CLUSTER_PORT || 7400) + 10 * block;
  }

  async start(): Promise<string> {
    this.url = (await run('bash', [SCRIPT, 'start', String(this.firstPort), this.dir], { timeout: 60_000 })).stdout.trim();
    return this.url;
  }

  async stop(): Promise<void> {
    // Paused nodes would not answer SHUTDOWN.
    for (const node of this.ports()) await this.signal(node, 'SIGCONT').catch(() => undefined);
    await run('bash', [SCRIPT, 'stop', String(this.firstPort), this.dir], { timeout: 60_000 });
  }

  ports(): number[] {
    return Array.from({ length: 6 }, (_, i) => this.firstPort + i);
  }

  /** The nodes as a live node sees them (`CLUSTER NODES`): id, port, role, and the slots a master holds. */
  async nodes(): Promise<ClusterNodeInfo[]> {
    for (const port of this.ports()) {
      const text = await cli(port, 'cluster', 'nodes').catch(() => '');
      if (!text) continue;
      return text
        .trim()
        .split('\n')
        .map((line) => {
          const [id, address, flags, , , , , , ...slots] = line.split(' ');
          return {
            id,
            port: Number(/:(\d+)@/.exec(address)?.[1]),
            master: flags.includes('master') && !flags.includes('fail'),
            failed: flags.includes('fail'),
            slots: slots
              .filter((s) => /^\d/.test(s))
              .reduce((n, s) => {
                const [a, b] = s.split('-').map(Number);
                return n + (b === undefined ? 1 : b - a + 1);
              }, 0),
          };
        });
    }
    throw new Error(`no node of the cluster on ${this.firstPort}-${this.firstPort + 5} answers`);
  }

  /** The port of the live master that holds a key matching `pattern` (SCAN MATCH), or undefined. */
  async masterHolding(pattern: string): Promise<number | undefined> {
    for (const node of (await this.nodes()).filter((n) => n.master)) {
      if ((await cli(node.port, '--scan', '--pattern', pattern).catch(() => '')).trim()) return node.port;
    }
    return undefined;
  }

  /** Stops a node the hard way (SIGKILL): no AOF flush, no handover; its replica must take over. */
  async kill(port: number): Promise<void> {
    process.kill(await this.pid(port), 'SIGKILL');
  }

  /** SIGSTOP or SIGCONT to a node: a stopped node keeps its connections open and answers nothing. */
  async signal(port: number, signal: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
    const pid = this.pids.get(port) ?? (await this.pid(port));
    this.pids.set(port, pid);
    process.kill(pid, signal);
  }

  /** Moves `slots` slots from one master to another while the cluster serves (`redis-cli --cluster reshard`). */
  async reshard(fromId: string, toId: string, slots: number): Promise<void> {
    await run(
      'redis-cli',
      ['--cluster', 'reshard', `127.0.0.1:${this.firstPort}`, '--cluster-from', fromId, '--cluster-to', toId, '--cluster-slots', String(slots), '--cluster-yes'],
      {
        timeout: 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  }

  /** Waits until every live node says `cluster_state:ok` and every slot has a live master. */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nodes = await this.nodes().catch(() => []);
      const live = nodes.filter((n) => !n.failed);
      const states = await Promise.all(live.map((n) => cli(n.port, 'cluster', 'info').catch(() => '')));
      const slots = live.filter((n) => n.master).reduce((sum, n) => sum + n.slots, 0);
      if (live.length && states.every((s) => s.includes('cluster_state:ok')) && slots === 16384) return;
      if (Date.now() > deadline) throw new Error(`the cluster on ${this.firstPort} is not healthy after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private readonly pids = new Map<number, number>();

  private async pid(port: number): Promise<number> {
    return Number(/process_id:(\d+)/.exec(await cli(port, 'info', 'server'))?.[1]);
  }
}

export interface ClusterNodeInfo {
  id: string;
  port: number;
  /** A master that is not marked failed. */
  master: boolean;
  failed: boolean;
  /** Slots it holds (masters). */
  slots: number;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...args], { timeout: 5000 })).stdout;
}
