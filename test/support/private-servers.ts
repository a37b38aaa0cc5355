import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { tempDir } from './temp-dirs';

/**
 * Servers a fault test owns (a redis-server of its own on a free loopback port), so that crashing, filling
 * or misconfiguring them never touches the suite's shared Redis on 6379.
 */

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** Spawns `command`, resolves once its output matches `ready`. */
export function spawnUntil(command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${output}`)), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}:\n${output}`));
    });
  });
}

export async function kill(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/**
 * A private redis-server, restartable on the same port and directory; `args` are added to its command line.
 * By default AOF with `appendfsync always`: every acknowledged write is on disk, so a crash tests the
 * crawler's recovery, not Redis's one-second fsync window.
 */
export class PrivateRedis {
  readonly dir = tempDir('redis-private-');
  process?: ChildProcess;
  constructor(
    readonly port: number,
    private readonly args: string[] = ['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction'],
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', ...this.args];
    this.process = await spawnUntil('redis-server', args, {}, /Ready to accept connections/);
  }

  crash(): Promise<void> {
    return kill(this.process, 'SIGKILL');
  }
}
