import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_NAMES } from '@crawler/contracts';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';

const ROOT = join(__dirname, '../..');

/** Every process below `pid`, children first found first. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map(Number)
      .filter(Boolean);
  } catch {
    // ps exits 1 when there are none.
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/** Runs `npm run <script>` and resolves with it and its output once `ready(output)` holds. */
function npmRun(script: string, env: NodeJS.ProcessEnv, ready: (output: string) => boolean): Promise<{ npm: ChildProcess; output: () => string }> {
  const npm = spawn('npm', ['run', '-s', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run ${script} did not get ready:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready(output)) {
        clearTimeout(timer);
        resolve({ npm, output: () => output });
      }
    };
    npm.stdout!.on('data', onData);
    npm.stderr!.on('data', onData);
    npm.once('exit', (code) => reject(new Error(`npm run ${script} exited with ${code}:\n${output}`)));
  });
}

/**
 * The documented way to start and stop one service is `npm run start:<service>` and a signal to it: the
 * signal must reach the service (npm forwards it to its child, which must be node itself, not a shell that
 * would die and leave node running).
 */
describe('npm run start:*', () => {
  const prefix = `start-scripts-${process.pid}`;
  const env = { REDIS_URL, CRAWLER_PREFIX: prefix, S3_URL: '', PORT: '0', LOG_LEVEL: 'info' };
  const started: ChildProcess[] = [];

  afterAll(async () => {
    for (const child of started) if (child.pid && alive(child.pid)) for (const pid of [child.pid, ...descendants(child.pid)]) process.kill(pid, 'SIGKILL');
    await clearPrefix(prefix);
  });

  it('every start script hands its process to node (exec), so signals reach the service', () => {
    const scripts: Record<string, string> = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
    const starts = Object.entries(scripts).filter(([name]) => name.startsWith('start:'));
    expect(starts.length).toBeGreaterThan(5);
    for (const [name, command] of starts) expect({ name, command }).toEqual({ name, command: expect.stringMatching(/^exec node /) });
  });

  it('a SIGTERM to npm stops the service it started, gracefully', async () => {
    const { npm } = await npmRun('start:url-extractor', env, (output) => /"msg":"url-extractor ready"/.test(output));
    started.push(npm);
    const service = descendants(npm.pid!);
    expect(service.length).toBeGreaterThan(0);
    npm.kill('SIGTERM');
    const stopped = await waitFor(() => service.every((pid) => !alive(pid)), 15_000);
    expect(stopped).toBe(true);
  }, 90_000);

  it('start:all prints where each service listens, and a SIGTERM to npm stops them all', async () => {
    const services = SERVICE_NAMES;
    const lines = (output: string) => output.split('\n').filter((line) => /\| ready on port \d+: /.test(line));
    const { npm, output } = await npmRun('start:all', env, (out) => lines(out).length === services.length);
    started.push(npm);
    for (const name of services) {
      const line = lines(output()).find((l) => l.startsWith(`${name} `.padEnd(15)));
      expect(line).toMatch(/ready on port (\d+): .*health http:\/\/127\.0\.0\.1:\d+\/health, metrics http:\/\/127\.0\.0\.1:\d+\/metrics/);
    }
    expect(lines(output()).find((l) => l.startsWith('control-plane'))).toMatch(/dashboard http:\/\/127\.0\.0\.1:\d+\//);
    const processes = descendants(npm.pid!);
    expect(processes.length).toBeGreaterThanOrEqual(services.length + 1);
    npm.kill('SIGTERM');
    const stopped = await waitFor(() => processes.every((pid) => !alive(pid)), 30_000);
    expect(stopped).toBe(true);
  }, 120_000);
});
