import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
