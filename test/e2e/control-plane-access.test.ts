import { execFile, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { RunningService, startService, stopService } from '../support/service-processes';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

const run = promisify(execFile);
const ROOT = join(__dirname, '../..');
const CLI = join(ROOT, 'dist/apps/crawl/src/cluster-cli.js');
const MAIN = join(ROOT, 'dist/apps/control-plane/src/main.js');
const TOKEN = 'e2e-token-3f9c2a7d5e1b4c68';

/** This machine's first address that is not loopback, if it has one. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && !a.internal && a.family === 'IPv4')?.address;

/** Whether something accepts a TCP connection at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function seedsFile(lines: number, tag: string): string {
  const file = join(tempDir('seeds-'), `${tag}.txt`);
  // Long-ish URLs, as real lists have: 100 000 of them are ~6 MB, far over the server's 1 MiB body limit.
  writeFileSync(file, Array.from({ length: lines }, (_, i) => `https://site-${tag}-${i}.example/some/path/index.html?ref=${i}`).join('\n'));
  return file;
}

/**
 * The control plane as its own process: where it listens with and without a token, the explicit opt-out,
 * and the CLI driving it with the token and seed files far larger than one request may be.
 */
describe('control plane process: listening address, token, CLI', () => {
  const prefix = `cpaccess-${randomUUID().slice(0, 8)}`;
  const running: RunningService[] = [];
  const env = { REDIS_URL, CRAWLER_PREFIX: prefix, LOG_LEVEL: 'info', CONTROL_PLANE_TOKEN: '', BIND_ADDRESS: '', CONTROL_PLANE_ALLOW_UNAUTHENTICATED: '' };

  const start = async (extra: Record<string, string>) => {
    const service = await startService('control-plane', { ...env, ...extra });
    running.push(service);
    return service;
  };

  afterAll(async () => {
    for (const service of running) await stopService(service);
    await clearPrefix(prefix);
    removeTempDirs();
  });

  it('without a token, listens on loopback only and says so at start', async () => {
    const cp = await start({});
    expect(await accepts('127.0.0.1', cp.port)).toBe(true);
    if (external) expect(await accepts(external, cp.port)).toBe(false);
    expect(cp.output.join('')).toMatch(/no CONTROL_PLANE_TOKEN: listening on 127\.0\.0\.1 only/);
  });

  it('refuses to listen elsewhere without a token unless told to, and then warns loudly', async () => {
    const refused = spawnSync(process.execPath, [MAIN], { env: { ...process.env, ...env, PORT: '0', BIND_ADDRESS: '0.0.0.0' }, encoding: 'utf8', timeout: 20_000 });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(
      /BIND_ADDRESS: a control plane without CONTROL_PLANE_TOKEN listens on loopback only \(got 0\.0\.0\.0\).*CONTROL_PLANE_ALLOW_UNAUTHENTICATED/,
    );
    const open = await start({ BIND_ADDRESS: '0.0.0.0', CONTROL_PLANE_ALLOW_UNAUTHENTICATED: 'true' });
    expect(open.output.join('')).toMatch(/"level":"?(40|warn)"?.*UNAUTHENTICATED CONTROL PLANE on 0\.0\.0\.0/);
    if (external) expect(await accepts(external, open.port)).toBe(true);
  });

  it('CLI: an empty CONTROL_PLANE_URL means the default address, not "Invalid URL"', async () => {
    const failed = await run(process.execPath, [CLI, 'status'], { env: { ...process.env, CONTROL_PLANE_URL: '' }, timeout: 30_000 }).catch((e) => e);
    expect(failed.stderr ?? '').not.toMatch(/Invalid URL/);
    expect(`${failed.stdout ?? ''}${failed.stderr ?? ''}`).toMatch(/127\.0\.0\.1:3000/);
  });

  describe('with a token', () => {
    let base: string;
    const cli = (args: string[], extra: Record<string, string> = {}) =>
      run(process.execPath, [CLI, ...args, '--control', base], { env: { ...process.env, CONTROL_PLANE_TOKEN: TOKEN, ...extra }, timeout: 120_000, maxBuffer: 1 << 24 });

    beforeAll(async () => {
      const cp = await start({ CONTROL_PLANE_TOKEN: TOKEN });
      base = `http://127.0.0.1:${cp.port}`;
      expect(cp.output.join('')).not.toContain(TOKEN);
    });

    it('listens on every interface, so that a pod or container can be reached', async () => {
      const port = Number(new URL(base).port);
      if (external) expect(await accepts(external, port)).toBe(true);
    });

    it('CLI: without the token it is refused with a clear error; with it, it pauses and resumes', async () => {
      await expect(cli(['pause'], { CONTROL_PLANE_TOKEN: '' })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/HTTP 401\): it needs its token: set CONTROL_PLANE_TOKEN/),
      });
      await expect(cli(['pause'], { CONTROL_PLANE_TOKEN: `${TOKEN}-wrong` })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/token it was given is wrong/),
      });
      const tokenFile = join(tempDir('token-'), 'token');
      writeFileSync(tokenFile, `${TOKEN}\n`);
      expect((await cli(['pause', '--reason', 'maintenance', '--token-file', tokenFile], { CONTROL_PLANE_TOKEN: '' })).stderr).toMatch(/paused since/);
      expect((await cli(['status'])).stdout).toMatch(/paused/);
      expect((await cli(['resume'])).stderr).toMatch(/resumed/);
      // Both kept in the operator audit, with the token's fingerprint, never the token.
      const audit = (await cli(['operator-audit'])).stdout;
      expect(audit).toMatch(/resume +token sha256:[0-9a-f]{16} +from [\d.:f]*127\.0\.0\.1 .*\n.*pause +token sha256:.*"reason":"maintenance"/);
      expect(audit).not.toContain(TOKEN);
    });

    it('CLI: a 5,000-line and a 100,000-line --seeds-file go in, split into requests the server accepts', async () => {
      const five = await cli(['seed', '--seeds-file', seedsFile(5000, 'a')]);
      expect(five.stderr).toMatch(/submitted 5000 seeds/);
      const started = performance.now();
      const hundred = await cli(['seed', '--seeds-file', seedsFile(100_000, 'b')]);
      expect(hundred.stderr).toMatch(/submitted 100000 seeds/);
      process.stdout.write(`100,000 seeds through the CLI: ${Math.round(performance.now() - started)} ms\n`);
      const status = JSON.parse((await cli(['status', '--json'])).stdout);
      expect(status.totals.seeds).toBe(105_000);
    });

    it('CLI: a bad line refuses the whole file before anything is sent', async () => {
      const file = seedsFile(3000, 'c');
      writeFileSync(file, '\nftp://nope.example/\n', { flag: 'a' });
      await expect(cli(['seed', '--seeds-file', file])).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/bad seeds, nothing submitted: "ftp:\/\/nope.example\/" \(scheme ftp: is not http\(s\)\)/),
      });
      expect(JSON.parse((await cli(['status', '--json'])).stdout).totals.seeds).toBe(105_000);
    });

    it('checks the token before reading a body: a stranger gets 401 for bad JSON and for a 2 MB body', async () => {
      const post = (body: string, token?: string) =>
        fetch(`${base}/seeds`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body });
      const huge = JSON.stringify({ urls: Array.from({ length: 90_000 }, (_, i) => `https://x${i}.example/`) });
      expect(Buffer.byteLength(huge)).toBeGreaterThan(2 * 1024 * 1024);
      for (const body of ['{"urls": [', huge]) {
        const res = await post(body);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
        expect((await post(body, `${TOKEN}-wrong`)).status).toBe(401);
      }
      expect((await post('{"urls": [', TOKEN)).status).toBe(400);
    });

    it("keeps the crawl's data behind the token while it listens beyond loopback, and serves the page and probes", async () => {
      for (const path of ['/status', '/urls/content?url=https://a.example/', '/failed-urls'])
        expect({ path, status: (await fetch(base + path)).status }).toEqual({ path, status: 401 });
      for (const path of ['/', '/health/live']) {
        const res = await fetch(base + path);
        expect({ path, status: res.status, poweredBy: res.headers.get('x-powered-by') }).toEqual({ path, status: 200, poweredBy: null });
      }
      expect((await fetch(`${base}/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    });

    it('answers an over-large body with a 413 that names the setting', async () => {
      const urls = Array.from({ length: 30_000 }, (_, i) => `https://x${i}.example/`);
      const res = await fetch(`${base}/seeds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ urls: [...urls, ...urls] }),
      });
      expect(res.status).toBe(413);
      expect(((await res.json()) as { message: string }).message).toMatch(/CONTROL_PLANE_MAX_BODY_BYTES \(1048576 bytes\)/);
    });
  });
});
