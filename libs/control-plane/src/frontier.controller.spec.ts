import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { RuntimeModule } from '@crawler/runtime';
import { createLogger } from '@crawler/logging';
import { ControlPlaneModule } from './control-plane.module';

describe('control plane: frontier host controls over HTTP', () => {
  let app: INestApplication;
  let base: string;
  let store: FrontierStore;
  const dir = mkdtempSync(join(tmpdir(), 'cp-'));

  beforeAll(async () => {
    const config = loadConfig({}, { dataDir: dir, logLevel: 'silent', port: 0 });
    const logger = createLogger({ level: config.logLevel, service: 'control-plane' });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger }), ControlPlaneModule] })
    class TestModule {}
    app = await NestFactory.create(TestModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
    store = app.get(FRONTIER_STORE);
    const now = Date.now();
    await store.enqueue(
      ['/1', '/2', '/3'].map((p) => ({ host: 'a.test:80', priority: 2, item: `["http://a.test${p}",1,1,0]` })),
      now,
    );
    const [claim] = await store.claim({ now, max: 1, leaseMs: 60_000 });
    await store.complete(
      claim.leaseId,
      { nextAt: now + 5000, ip: '127.0.0.1', fetched: true, politeness: { recentMs: [20], backoff: 0, delayMs: 5000, cause: 'robots' } },
      now,
    );
    await store.audit('a.test:80', [JSON.stringify({ at: now, event: 'fetched', delayMs: 5000, cause: 'robots' })]);
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };

  it('reads a host: queue depth, next eligible time, delay and its cause, audit log', async () => {
    const { status, body } = await call('GET', '/hosts/a.test:80');
    expect(status).toBe(200);
    expect(body).toMatchObject({ host: 'a.test:80', queued: 2, inFlight: 0, fetched: 1, ip: '127.0.0.1', politeness: { delayMs: 5000, cause: 'robots' } });
    expect(Date.parse(body.nextEligibleAt)).toBe(body.nextAt);
    expect(body.audit).toEqual([expect.objectContaining({ event: 'fetched', cause: 'robots' })]);
  });

  it('sets a delay, blocks until a time, sets a budget, and purges', async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const set = await call('PATCH', '/hosts/a.test:80', { delayMs: 9000, blockedUntil: until, budget: 10 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ delayMs: 9000, blockedUntil: Date.parse(until), budget: 10, nextAt: Date.parse(until) });
    expect(await store.claim({ now: Date.now() + 10_000, max: 10, leaseMs: 1000 })).toEqual([]);
    const purged = await call('DELETE', '/hosts/a.test:80/queue');
    expect(purged.body).toEqual({ host: 'a.test:80', dropped: 2 });
    expect((await call('GET', '/frontier')).body).toMatchObject({ size: 0, leased: 0 });
  });

  it('refuses bad controls, naming the field', async () => {
    const bad = await call('PATCH', '/hosts/a.test:80', { delayMs: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/delayMs/);
    expect((await call('PATCH', '/hosts/a.test:80', { speed: 3 })).status).toBe(400);
  });

  it('lists the hosts a page at a time, in name order, with each one’s state', async () => {
    const now = Date.now();
    const names = Array.from({ length: 5 }, (_, i) => `list-${i}.test:80`);
    await store.enqueue(
      names.map((host) => ({ host, priority: 2, item: `["http://${host.slice(0, -3)}/",1,1,0]` })),
      now,
    );
    const first = await call('GET', '/hosts?limit=3');
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(6);
    expect(first.body.hosts.map((h: { host: string }) => h.host)).toEqual(['a.test:80', 'list-0.test:80', 'list-1.test:80']);
    expect(first.body.hosts[0]).toMatchObject({ fetched: 1, ip: '127.0.0.1' });
    expect(first.body.hosts[1]).toMatchObject({ queued: 1, inFlight: 0, fetched: 0 });
    expect(first.body.next).toBe('list-1.test:80');
    const second = await call('GET', `/hosts?limit=3&after=${encodeURIComponent(first.body.next)}`);
    expect(second.body.hosts.map((h: { host: string }) => h.host)).toEqual(['list-2.test:80', 'list-3.test:80', 'list-4.test:80']);
    const last = await call('GET', `/hosts?limit=3&after=${encodeURIComponent(second.body.next)}`);
    expect(last.body).toEqual({ total: 6, hosts: [], next: null });
    expect((await call('GET', '/hosts?limit=501')).status).toBe(400);
    expect((await call('GET', '/hosts?limit=0')).status).toBe(400);
  });
});
