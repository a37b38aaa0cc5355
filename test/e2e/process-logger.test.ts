import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { TestWeb } from '../web/test-web';
import { startService, stopService } from '../support/service-processes';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { QUICK_ROBOTS_GIVE_UP_ENV } from '../support/test-web-cluster';
import { crawlTestWeb } from '../support/test-web-crawl';

afterAll(removeTempDirs);

/** Preloaded into a process, writes how many root loggers it built into `file` as it exits. */
const countRootLoggers = (file: string) => ({
  NODE_OPTIONS: `--require ${join(__dirname, '../../dist/test/support/count-root-loggers.js')}`,
  ROOT_LOGGER_COUNT_FILE: file,
});

/**
 * One root logger a process (its services and components log on children of it), and its last lines are not
 * lost: they are written out as the process exits, whatever ends it (the shutdown deadline's lines are
 * checked in stop-deadline.test.ts).
 */
describe('the process logger', () => {
  it('is one in the embedded crawl, which every service logs through', async () => {
    const web = await TestWeb.start({ hosts: 12 });
    try {
      const dir = tempDir('one-logger-');
      const counted = join(dir, 'root-loggers');
      await crawlTestWeb(web, dir, { args: [...web.seeds(), '--max-pages', '20'], delaySeconds: 0, env: { ...QUICK_ROBOTS_GIVE_UP_ENV, ...countRootLoggers(counted) } });
      expect(readFileSync(counted, 'utf8')).toBe('1');
      const log = readFileSync(join(dir, 'crawl.log'), 'utf8');
      expect(log).toMatch(/"context":"InstanceLoader"/); // Nest's own messages
      expect(log).toMatch(/"event":"fetch"/); // the downloader's
      expect(log).toMatch(/"msg":"stopped"/); // the runtime's, the last before the exit
    } finally {
      await web.close();
    }
  }, 60_000);

  it('is one in a service', async () => {
    const counted = join(tempDir('one-logger-'), 'root-loggers');
    const service = await startService('url-seen', { REDIS_URL: '', S3_URL: '', ...countRootLoggers(counted) });
    expect(await stopService(service)).toBe(0);
    expect(readFileSync(counted, 'utf8')).toBe('1');
  }, 60_000);

  it('says why a service could not start, in its log, before it exits', async () => {
    // A port already taken: the service's listen fails after its modules have started.
    const taken = createServer();
    const port = await new Promise<number>((resolve) => taken.listen(0, () => resolve((taken.address() as { port: number }).port)));
    try {
      const child = spawn(process.execPath, [join(__dirname, '../../dist/apps/url-seen/src/main.js')], {
        env: { ...process.env, REDIS_URL: '', S3_URL: '', PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const code = await new Promise((resolve) => child.once('close', resolve));
      expect(code).toBe(1);
      const fatal = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
        .find((line) => line.level === 60);
      expect(fatal).toMatchObject({ service: 'url-seen', msg: 'url-seen could not start', err: { code: 'EADDRINUSE' } });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 60_000);
});
