import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { POSTGRES_URL } from '@crawler/records/testing';
import { REDIS_CLUSTER_URL } from '../support/redis-cluster';
import { REDIS_URL } from '../support/redis-prefix';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const CLI = join(__dirname, '../../dist/apps/crawl/src/main.js');

/**
 * Bad flags, bad configuration and bad seeds are refused at the edge: the crawl CLI exits non-zero before
 * any request, and its message names the value, why it is wrong and what is allowed. (The same validation,
 * unit-tested: libs/config crawler-config.spec.ts, libs/control-plane seed-list.spec.ts.)
 */
describe('the crawl CLI refuses bad input with a clear message', () => {
  let out: string;

  beforeAll(() => {
    out = tempDir('bad-input-');
  });

  afterAll(removeTempDirs);

  async function crawl(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
    try {
      await run(process.execPath, [CLI, ...args, '--out', out], { env: { ...process.env, REDIS_URL: '', S3_URL: '', ...env }, timeout: 20_000 });
      return { code: 0, stderr: '' };
    } catch (error) {
      const e = error as { code: number; stderr: string };
      return { code: e.code, stderr: e.stderr };
    }
  }

  it.each([
    [['--max-pages', '-1', 'a.test'], /--max-pages.*'-1'.*must be a number ≥ 0/],
    [['--delay', 'soon', 'a.test'], /--delay.*'soon'.*must be a number ≥ 0/],
  ])('a bad flag value: %j', async (args, message) => {
    const { code, stderr } = await crawl(args);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(message);
  });

  it.each([
    [['--scope', 'planet', 'a.test'], {}, /URL_FILTER_SCOPE: .*"host"\|"domain"\|"allowlist"\|"any".*\(got "planet"\)/],
    [['a.test'], { URL_FILTER_SCOPE: 'planet' }, /URL_FILTER_SCOPE: .*"host"\|"domain"\|"allowlist"\|"any".*\(got "planet"\)/],
    [['--max-depth', '1.5', 'a.test'], {}, /URL_FILTER_MAX_DEPTH: .*int.*\(got 1\.5\)/],
    [['a.test'], { FRONTIER_LEASE_MS: 'abc' }, /FRONTIER_LEASE_MS: .*number.*\(got "abc"\)/],
    [['--redis', 'http://x', 'a.test'], {}, /REDIS_URL: .*\(got "http:\/\/x"\)/],
    [['a.test'], { DOWNLOADER_USER_AGENT: 'bot/1\r\nX-Injected: 1' }, /DOWNLOADER_USER_AGENT: must be a valid HTTP header value: no line breaks/],
  ])('bad configuration: %j %j', async (args, env, message) => {
    const { code, stderr } = await crawl(args, env);
    expect(code).toBe(2);
    expect(stderr).toMatch(/invalid configuration/);
    expect(stderr).toMatch(message);
  });

  it.each([
    [['ftp://x'], /"ftp:\/\/x" \(scheme ftp: is not http\(s\)\)/],
    [['http://', 'a.test'], /"http:\/\/" \(not a URL or domain name\)/],
    [['http://user:pw@a.test/'], /user:password@/],
    [[], /no seeds given/],
  ])('bad seeds: %j', async (args, message) => {
    const { code, stderr } = await crawl(args, { DNS_HOSTS: 'a.test=127.0.0.1' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/bad seeds/);
    expect(stderr).toMatch(message);
  });
});

/** Runs a built entry point to its exit: its exit code and what it printed on stderr. */
async function start(script: string, args: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [join(__dirname, '../../dist', script), ...args], { env: { ...process.env, S3_URL: '', ...env }, timeout: 20_000 });
    return { code: 0, stderr: '' };
  } catch (error) {
    const e = error as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

/**
 * REDIS_URL is checked against what answers before anything runs: a URL of the wrong kind, or one nothing
 * answers at, stops the CLI and every service with a message that names the setting.
 */
describe('a REDIS_URL that cannot work is refused at start, by name', () => {
  const clusterNode = REDIS_CLUSTER_URL.replace(/^redis\+cluster:\/\//, '').split(',')[0];
  const node = new URL(REDIS_URL).host;

  it.each([
    ['the CLI', 'apps/crawl/src/main.js', ['--out', tempDir('bad-redis-'), 'a.test']],
    ['a service', 'apps/url-filter/src/main.js', []],
  ])(
    '%s: a node URL on a cluster node, a cluster URL on a plain node, a URL nothing answers at',
    async (_, script, args) => {
      const cases: [string, RegExp][] = [
        [
          `redis://${clusterNode}`,
          new RegExp(`REDIS_URL names one Redis node, but ${clusterNode} is a node of a Redis Cluster .*write redis\\+cluster://${clusterNode}`),
        ],
        [`redis+cluster://${node}`, new RegExp(`REDIS_URL is a Redis Cluster URL, but ${node} is a single Redis with cluster mode off: write redis://${node}`)],
        [
          'redis+cluster://127.0.0.1:1,127.0.0.1:2',
          /REDIS_URL redis\+cluster:\/\/127\.0\.0\.1:1,127\.0\.0\.1:2: no Redis answered within 500 ms: 127\.0\.0\.1:1 \(.*ECONNREFUSED/,
        ],
      ];
      for (const [url, message] of cases) {
        const { code, stderr } = await start(script, args, { REDIS_URL: url, REDIS_STARTUP_WAIT_MS: '500' });
        expect({ url, code }).toEqual({ url, code: 2 });
        expect(stderr).toMatch(/refusing to start/);
        expect(stderr).toMatch(message);
      }
    },
    60_000,
  );
});

/**
 * RECORDS_URL is checked the same way: a server nothing answers at (waited for RECORDS_STARTUP_WAIT_MS), or
 * a database that does not exist, stops the CLI and every service with a message that names the setting.
 */
describe('a RECORDS_URL that cannot work is refused at start, by name', () => {
  const missing = new URL(POSTGRES_URL);
  missing.pathname = '/no_such_records_database';

  it.each([
    ['the CLI', 'apps/crawl/src/main.js', ['--out', tempDir('bad-records-'), 'a.test']],
    ['a service', 'apps/content-seen/src/main.js', []],
  ])(
    '%s: a server nothing answers at, a database that does not exist',
    async (_, script, args) => {
      const cases: [string, RegExp][] = [
        [
          'postgres://crawler:secret@127.0.0.1:1/crawl',
          /RECORDS_URL postgres:\/\/crawler:\*\*\*@127\.0\.0\.1:1\/crawl: cannot connect within 500 ms \(RECORDS_STARTUP_WAIT_MS\) \(.*ECONNREFUSED/,
        ],
        [missing.href, /RECORDS_URL .*\/no_such_records_database: cannot connect \(database "no_such_records_database" does not exist\)/],
      ];
      for (const [url, message] of cases) {
        const { code, stderr } = await start(script, args, { REDIS_URL, RECORDS_URL: url, RECORDS_STARTUP_WAIT_MS: '500' });
        expect({ url, code }).toEqual({ url, code: 2 });
        expect(stderr).toMatch(/refusing to start/);
        expect(stderr).toMatch(message);
      }
    },
    60_000,
  );
});
