import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { QueueName } from '@crawler/contracts';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { PauseSwitch } from '@crawler/crawl-state';
import { RuntimeModule } from '@crawler/runtime';
import { createLogger } from '@crawler/logging';
import { ControlPlaneModule } from './control-plane.module';

/** The RuntimeModule's logger; the configuration below logs nothing (LOG_LEVEL silent). */
const logger = createLogger({ level: 'silent', service: 'control-plane' });

const TOKEN = 'test-token-0123456789abcdef';

/** Who may drive the control plane: the token, JSON only, loopback names only without a token. */
describe('control plane: who may change (and read) the crawl', () => {
  const dirs: string[] = [];
  const apps: INestApplication[] = [];

  async function start(env: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'cp-auth-'));
    dirs.push(dir);
    const config = loadConfig(env, { dataDir: dir, logLevel: 'silent', port: 0 });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger }), ControlPlaneModule] })
    class TestModule {}
    // Nest's default body parsers (JSON and forms), as an app that forgot to restrict them would have.
    const app = await NestFactory.create(TestModule, { logger: false });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return {
      base: `http://127.0.0.1:${app.getHttpServer().address().port}`,
      queues: app.get<QueueTransport>(QUEUE_TRANSPORT),
      pause: app.get(PauseSwitch),
    };
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A request with the Host header a browser would send for another name (fetch cannot set Host). */
  const asHost = (base: string, host: string, method: string, path: string, body?: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(base + path, { method, headers: { host, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  const json = (body: unknown, token?: string): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

  describe('without a token (loopback only)', () => {
    let cp: Awaited<ReturnType<typeof start>>;
    beforeAll(async () => {
      cp = await start({});
    });

    it('refuses a form-encoded POST /seeds, as an HTML form on any web site would send it (415, nothing queued)', async () => {
      const form = await fetch(`${cp.base}/seeds`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'urls[0]=https%3A%2F%2Fattacker.example%2F&urls[1]=victim.example',
      });
      expect(form.status).toBe(415);
      expect(((await form.json()) as any).message).toMatch(/application\/json/);
      expect((await cp.queues.counts(QueueName.FilterUrls)).waiting).toBe(0);
      const multipart = new FormData();
      multipart.append('urls', 'https://attacker.example/');
      expect((await fetch(`${cp.base}/seeds`, { method: 'POST', body: multipart })).status).toBe(415);
    });

    it('does not pause on a text/plain POST /pause, nor on one with no body and no type', async () => {
      const text = await fetch(`${cp.base}/pause`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"reason":"csrf"}' });
      expect(text.status).toBe(415);
      expect((await fetch(`${cp.base}/pause`, { method: 'POST' })).status).toBe(415);
      expect(await cp.pause.isPaused()).toBe(false);
      expect((await fetch(`${cp.base}/pause`, json({}))).status).toBe(200);
      expect(await cp.pause.isPaused()).toBe(true);
      await fetch(`${cp.base}/resume`, json({}));
    });

    it('answers only requests addressed to a loopback name (a rebound web site name is refused)', async () => {
      const rebound = await asHost(cp.base, 'attacker.example', 'GET', '/status');
      expect(rebound.status).toBe(403);
      expect(rebound.body.message).toMatch(/loopback/);
      expect((await asHost(cp.base, 'attacker.example:3000', 'POST', '/pause', '{}')).status).toBe(403);
      expect(await cp.pause.isPaused()).toBe(false);
      for (const host of ['localhost:3000', '127.0.0.1', '[::1]:3000']) expect((await asHost(cp.base, host, 'GET', '/frontier')).status).toBe(200);
      // Probes and Prometheus carry no Host of ours, and change nothing.
      expect((await asHost(cp.base, 'control-plane', 'GET', '/health/live')).status).toBe(200);
    });
  });

  describe('with CONTROL_PLANE_TOKEN', () => {
    let cp: Awaited<ReturnType<typeof start>>;
    beforeAll(async () => {
      cp = await start({ CONTROL_PLANE_TOKEN: TOKEN });
    });

    it('refuses every route that changes the crawl without the token (401, naming the header)', async () => {
      const routes: [string, string, unknown][] = [
        ['POST', '/seeds', { urls: ['https://a.test/'] }],
        ['POST', '/pause', {}],
        ['POST', '/resume', {}],
        ['POST', '/failed/replay', {}],
        ['PATCH', '/hosts/a.test', { blockedUntil: Date.parse('2030-01-01T00:00:00Z') }],
        ['DELETE', '/hosts/a.test/queue', undefined],
      ];
      for (const [method, path, body] of routes) {
        const res = await fetch(cp.base + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
        expect(((await res.json()) as any).message).toMatch(/Authorization: Bearer/);
        const wrong = await fetch(cp.base + path, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}x` },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect({ method, path, status: wrong.status }).toEqual({ method, path, status: 401 });
      }
      expect(await cp.pause.isPaused()).toBe(false);
      expect((await cp.queues.counts(QueueName.FilterUrls)).waiting).toBe(0);
    });

    it('accepts them with the token, as JSON only (415 for a form even with the token)', async () => {
      expect((await fetch(`${cp.base}/seeds`, json({ urls: ['https://a.test/'] }, TOKEN))).status).toBe(201);
      expect((await fetch(`${cp.base}/pause`, json({ reason: 'x' }, TOKEN))).status).toBe(200);
      expect(await cp.pause.isPaused()).toBe(true);
      expect((await fetch(`${cp.base}/resume`, json({}, TOKEN))).status).toBe(200);
      const patch = await fetch(`${cp.base}/hosts/a.test`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: `bearer ${TOKEN}` },
        body: '{"delayMs":5000}',
      });
      expect(patch.status).toBe(200);
      const form = await fetch(`${cp.base}/seeds`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${TOKEN}` },
        body: 'urls[0]=b.test',
      });
      expect(form.status).toBe(415);
    });

    it('listening beyond loopback, keeps reads behind the token by default; the page, /health and /metrics stay open, for any Host', async () => {
      for (const path of ['/status', '/frontier', '/hosts/a.test', '/failed', '/failed-urls', '/dead-letters', '/urls/content?url=http://a.test/']) {
        expect({ path, status: (await asHost(cp.base, 'crawler.example.org', 'GET', path)).status }).toEqual({ path, status: 401 });
      }
      for (const path of ['/', '/health/live', '/metrics']) {
        expect({ path, status: (await asHost(cp.base, 'crawler.example.org', 'GET', path)).status }).toEqual({ path, status: 200 });
      }
    });
  });

  describe('with a token, reads opened explicitly or listening on loopback only', () => {
    it('leaves reads open with CONTROL_PLANE_PROTECT_READS=false, and on a loopback BIND_ADDRESS; changes still need the token', async () => {
      for (const env of [{ CONTROL_PLANE_PROTECT_READS: 'false' }, { BIND_ADDRESS: '127.0.0.1' }] as Record<string, string>[]) {
        const cp = await start({ CONTROL_PLANE_TOKEN: TOKEN, ...env });
        for (const path of ['/status', '/frontier', '/hosts/a.test', '/failed', '/failed-urls', '/dead-letters', '/', '/health/live', '/metrics']) {
          expect({ env, path, status: (await asHost(cp.base, 'crawler.example.org', 'GET', path)).status }).toEqual({ env, path, status: 200 });
        }
        expect((await fetch(`${cp.base}/pause`, json({}))).status).toBe(401);
      }
    });
  });

  describe('with CONTROL_PLANE_PROTECT_READS', () => {
    let cp: Awaited<ReturnType<typeof start>>;
    beforeAll(async () => {
      cp = await start({ CONTROL_PLANE_TOKEN: TOKEN, CONTROL_PLANE_PROTECT_READS: 'true' });
    });

    it('needs the token to read the crawl, but serves the dashboard page (a navigation carries no header), /health and /metrics', async () => {
      for (const path of [
        '/status',
        '/status/history',
        '/frontier',
        '/hosts/a.test',
        '/failed',
        '/failed-urls',
        '/dead-letters',
        '/urls?url=http://a.test/',
        '/urls/content?url=http://a.test/',
      ]) {
        expect({ path, status: (await fetch(cp.base + path)).status }).toEqual({ path, status: 401 });
        const authorized = await fetch(cp.base + path, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect({ path, authorized: authorized.status !== 401 }).toEqual({ path, authorized: true });
      }
      for (const path of ['/', '/dashboard', '/health', '/health/live', '/metrics']) {
        expect({ path, status: (await fetch(cp.base + path)).status }).toEqual({ path, status: 200 });
      }
    });
  });
});
