import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestWeb } from '../web/test-web';
import { freePort, kill, PrivateRedis } from '../support/private-servers';
import { CRAWL_CLI } from '../support/run-crawl-cli';
import { startService } from '../support/service-processes';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV } from '../support/test-web-cluster';

afterAll(removeTempDirs);

const SHUTDOWN_TIMEOUT_MS = 3000;

/**
 * A stop that cannot complete: Redis is frozen (SIGSTOP: its connections stay open and nothing answers) when
 * the crawl is told to stop, so neither its summary nor its stores' close can finish. It exits anyway after
 * SHUTDOWN_TIMEOUT_MS, saying so, with the signal's exit code; a second signal does not wait even that long.
 */
describe('a crawl told to stop while Redis does not answer', () => {
  let web: TestWeb;
  let redis: PrivateRedis;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 20, seed: 5 });
  });
  beforeEach(async () => {
    redis = new PrivateRedis(await freePort(), ['--appendonly', 'no', '--maxmemory-policy', 'noeviction']);
    await redis.start();
    web.reset();
  });
  afterEach(async () => {
    redis.process?.kill('SIGCONT');
    await redis.crash();
  });
  afterAll(() => web?.close());

  const startCrawl = () => {
    const dir = tempDir('stop-deadline-');
    writeFileSync(join(dir, 'hosts'), web.hostsFile());
    const child = spawn(
      process.execPath,
      [
        CRAWL_CLI,
        ...web.seeds(),
        '--scope',
        'any',
        '--delay',
        '0.5',
        '--hosts-file',
        join(dir, 'hosts'),
        '--allow-private',
        '--redis',
        redis.url,
        '--out',
        dir,
        '--json',
      ],
      { env: { ...process.env, ...ONE_ADDRESS_ENV, ...ASK_ONCE_ENV, S3_URL: '', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() })));
    return { child, exited, stderr: () => stderr, log: () => readFileSync(join(dir, 'crawl.log'), 'utf8') };
  };
  const crawling = async () => {
    const deadline = Date.now() + 60_000;
    while (web.requests.length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(web.requests.length).toBeGreaterThanOrEqual(10);
  };

  it('exits after SHUTDOWN_TIMEOUT_MS with exit code 143, naming the setting', async () => {
    const crawl = startCrawl();
    try {
      await crawling();
      redis.process!.kill('SIGSTOP');
      const stoppedAt = Date.now();
      crawl.child.kill('SIGTERM');
      const { code, at } = await Promise.race([
        crawl.exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit 20 s after SIGTERM:\n${crawl.stderr()}`)), 20_000)),
      ]);
      expect(code).toBe(143);
      expect(at - stoppedAt).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS - 100);
      expect(crawl.stderr()).toMatch(/crawl: not stopped within SHUTDOWN_TIMEOUT_MS \(3000 ms\): exiting without a clean stop/);
      // Its log says so too: the line written just before process.exit() is not lost in the log's buffer.
      expect(crawl.log()).toMatch(/"level":50,.*"msg":"crawl: not stopped within SHUTDOWN_TIMEOUT_MS \(3000 ms\)/);
    } finally {
      await kill(crawl.child, 'SIGKILL');
    }
  }, 90_000);

  it('exits at once on a second Ctrl-C', async () => {
    const crawl = startCrawl();
    try {
      await crawling();
      redis.process!.kill('SIGSTOP');
      crawl.child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 300));
      const secondAt = Date.now();
      crawl.child.kill('SIGINT');
      const { code, at } = await Promise.race([
        crawl.exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit 20 s after the second SIGINT:\n${crawl.stderr()}`)), 20_000)),
      ]);
      expect(code).toBe(130);
      expect(at - secondAt).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      expect(crawl.stderr()).toMatch(/crawl: SIGINT again while stopping: exiting without a clean stop/);
      expect(crawl.log()).toMatch(/"level":50,.*"msg":"crawl: SIGINT again while stopping/);
    } finally {
      await kill(crawl.child, 'SIGKILL');
    }
  }, 90_000);
});

describe('a service told to stop while Redis does not answer', () => {
  it('exits after SHUTDOWN_TIMEOUT_MS with exit code 1, naming the setting', async () => {
    const redis = new PrivateRedis(await freePort(), ['--appendonly', 'no', '--maxmemory-policy', 'noeviction']);
    await redis.start();
    const service = await startService('url-seen', { REDIS_URL: redis.url, S3_URL: '', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) });
    try {
      const exited = new Promise<number | null>((resolve) => service.process.once('exit', resolve));
      redis.process!.kill('SIGSTOP');
      const stoppedAt = Date.now();
      service.process.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit 20 s after SIGTERM:\n${service.output.join('')}`)), 20_000)),
      ]);
      expect(code).toBe(1);
      expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS - 100);
      expect(service.output.join('')).toMatch(/url-seen: not stopped within SHUTDOWN_TIMEOUT_MS \(3000 ms\): exiting without a clean stop/);
      expect(service.output.join('')).toMatch(/"level":50,.*"msg":"url-seen: not stopped within SHUTDOWN_TIMEOUT_MS \(3000 ms\)/);
    } finally {
      await kill(service.process, 'SIGKILL');
      redis.process?.kill('SIGCONT');
      await redis.crash();
    }
  }, 60_000);
});
