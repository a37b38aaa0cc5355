import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@crawler/config';
import { SiteSettingsService } from '@crawler/crawl-state';
import { createLogger } from '@crawler/logging';
import { RuntimeModule } from '@crawler/runtime';
import { RedisStateStore } from '@crawler/state';
import { ControlPlaneModule } from './control-plane.module';

const TOKEN = 'sites-token-0123456789abcdef';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * What `read` answers once it equals `expected`, or after 5 s what it answers then: a replica reads the
 * settings every SITE_SETTINGS_REFRESH_MS (100 ms here), and on a loaded machine that timer runs late.
 */
async function eventually<T>(read: () => Promise<T>, expected: unknown): Promise<T> {
  const deadline = Date.now() + 5000;
  let value = await read();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

/**
 * The per-site settings through the control plane, on Redis as the distributed shape keeps them: the file's
 * rules listed, a live change made with the token only, audited, and read by another process (a frontier or
 * downloader replica) within SITE_SETTINGS_REFRESH_MS.
 */
describe('control plane: per-site settings over HTTP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-sites-'));
  const prefix = `t-sites-${process.pid}-${Math.random().toString(36).slice(2)}`;
  let app: INestApplication;
  let base: string;
  let replicaState: RedisStateStore;
  let replica: SiteSettingsService;

  beforeAll(async () => {
    const file = join(dir, 'sites.yaml');
    writeFileSync(file, 'sites:\n  "*.example.com":\n    minDelayMs: 5000\n    userAgent: file-bot\n');
    const env = { CONTROL_PLANE_TOKEN: TOKEN, SITE_SETTINGS_FILE: file, SITE_SETTINGS_REFRESH_MS: '100', FRONTIER_MIN_DELAY_MS: '1000' };
    const config = loadConfig(env, { dataDir: dir, logLevel: 'silent', port: 0, redisUrl: REDIS_URL, prefix });
    const logger = createLogger({ level: 'silent', service: 'control-plane' });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger }), ControlPlaneModule] })
    class TestModule {}
    app = await NestFactory.create(TestModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
    replicaState = new RedisStateStore({ url: REDIS_URL, prefix });
    replica = new SiteSettingsService(replicaState, config);
  });

  afterAll(async () => {
    await replicaState.clear();
    await replicaState.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown, token: string | null = TOKEN): Promise<{ status: number; body: any }> => {
    const headers = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const response = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };

  it('lists the file’s rules and what a host gets', async () => {
    expect((await call('GET', '/sites')).body).toEqual({
      file: [{ pattern: '*.example.com', settings: { minDelayMs: 5000, userAgent: 'file-bot' }, at: expect.stringMatching(/sites\.yaml:2:3$/) }],
      live: [],
    });
    expect((await call('GET', '/sites?host=docs.example.com')).body).toEqual({
      host: 'docs.example.com',
      settings: { minDelayMs: 5000, userAgent: 'file-bot' },
      patterns: ['*.example.com'],
    });
  });

  it('changes a site live, with the token only, and every replica applies it', async () => {
    expect((await call('PUT', '/sites/docs.example.com', { maxPages: 10 }, null)).status).toBe(401);
    const put = await call('PUT', '/sites/docs.example.com', { maxPages: 10, headers: { 'Accept-Language': 'de' } });
    expect(put).toEqual({ status: 200, body: { pattern: 'docs.example.com', settings: { maxPages: 10, headers: { 'Accept-Language': 'de' } } } });
    const docs = {
      settings: { minDelayMs: 5000, userAgent: 'file-bot', maxPages: 10, headers: { 'Accept-Language': 'de' } },
      patterns: ['docs.example.com', '*.example.com'],
    };
    expect(await eventually(() => replica.forHost('docs.example.com'), docs)).toEqual(docs);
    // A live rule of the file's pattern replaces it whole; removing it brings the file's back.
    await call('PUT', `/sites/${encodeURIComponent('*.example.com')}`, { maxDepth: 3 });
    const www = async () => (await replica.forHost('www.example.com')).settings;
    expect(await eventually(www, { maxDepth: 3 })).toEqual({ maxDepth: 3 });
    expect((await call('DELETE', `/sites/${encodeURIComponent('*.example.com')}`)).body).toEqual({ pattern: '*.example.com', removed: true });
    const fromFile = { minDelayMs: 5000, userAgent: 'file-bot' };
    expect(await eventually(www, fromFile)).toEqual(fromFile);
    const audit = (await call('GET', '/audit')).body.actions;
    expect(audit.map((a: any) => [a.action, a.detail.pattern])).toEqual([
      ['site-settings-removed', '*.example.com'],
      ['site-settings', '*.example.com'],
      ['site-settings', 'docs.example.com'],
    ]);
  });

  it('never shows nor audits a cookie value, while every replica sends it', async () => {
    const put = await call('PUT', '/sites/shop.test', { cookies: ['sid=s3cret; Path=/'] });
    expect(put).toEqual({ status: 200, body: { pattern: 'shop.test', settings: { cookies: [{ name: 'sid', value: '(hidden)', path: '/' }] } } });
    const sent = [{ name: 'sid', value: 's3cret', path: '/' }];
    expect(await eventually(async () => (await replica.forHost('shop.test')).settings.cookies, sent)).toEqual(sent);
    const shown = JSON.stringify([(await call('GET', '/sites')).body, (await call('GET', '/sites?host=shop.test')).body, (await call('GET', '/audit')).body]);
    expect(shown).toContain('(hidden)');
    expect(shown).not.toContain('s3cret');
    await call('DELETE', '/sites/shop.test');
  });

  it('refuses bad settings with the field named, and a delay under the floor', async () => {
    expect(await call('PUT', '/sites/a.test', { concurrency: 17 })).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/^concurrency: .*<=16/) },
    });
    for (const fileOnly of [{ proxy: 'http://p:3128' }, { render: false }]) {
      expect(await call('PUT', '/sites/a.test', fileOnly)).toMatchObject({
        status: 400,
        body: { message: expect.stringMatching(new RegExp(`^${Object.keys(fileOnly)[0]}: set in the site settings file only`)) },
      });
    }
    expect(await call('PUT', '/sites/a.test', { cookies: [{ name: 'sid', value: 'secret; x' }] })).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/^cookies.0.value: a cookie value may not hold/) },
    });
    expect(await call('PUT', '/sites/a.test', { maxPages: 0 })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^maxPages: /) } });
    expect(await call('PUT', '/sites/a.test', { minDelayMs: 10 })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/FRONTIER_MIN_DELAY_MS/) } });
    expect(await call('PUT', '/sites/a%2Fb', {})).toMatchObject({ status: 400, body: { message: expect.stringMatching(/not a host name/) } });
  });
});
