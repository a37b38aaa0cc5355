import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { pino } from 'pino';
import { loadConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { createLogger, LOGGER } from '@crawler/logging';
import { RuntimeModule } from '@crawler/runtime';
import { MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { ControlPlaneModule } from './control-plane.module';
import { OperatorAudit } from './operator-audit.service';

const TOKEN = 'audit-token-0123456789abcdef';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_CLUSTER_URL = process.env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
const uniquePrefix = () => `t-audit-${process.pid}-${Math.random().toString(36).slice(2)}`;
const request = { ip: '::ffff:10.1.2.3', headers: { 'user-agent': 'curl/8', 'x-forwarded-for': '203.0.113.9' } };

/** The operator audit on every state store driver: kept in order, capped, and read back by another process's instance. */
describe.each([
  ['memory', async () => new MemoryStateStore({ prefix: uniquePrefix() })],
  ['redis', async () => new RedisStateStore({ url: REDIS_URL, prefix: uniquePrefix() })],
  ['redis cluster', async () => new RedisStateStore({ url: REDIS_CLUSTER_URL, prefix: uniquePrefix() })],
] as [string, () => Promise<StateStore>][])('OperatorAudit on the %s state store', (_name, make) => {
  let store: StateStore;
  const logger = createLogger({ level: 'silent', service: 'control-plane' });
  const audit = (env: Record<string, string> = {}) => new OperatorAudit(store, loadConfig(env, { logLevel: 'silent' }), logger);

  beforeEach(async () => {
    store = await make();
  });
  afterEach(async () => {
    await store.clear();
    await store.close();
  });

  it('keeps who, from where, when and what, newest first, and the newest CONTROL_PLANE_AUDIT_KEPT only', async () => {
    const writer = audit({ CONTROL_PLANE_TOKEN: TOKEN, CONTROL_PLANE_AUDIT_KEPT: '3' });
    for (let i = 0; i < 5; i++) await writer.record(request, 'host-controls', { host: `h${i}.test`, delayMs: 5000 });
    // Another process (a control-plane replica, or one restarted) reads the same audit.
    const { kept, actions } = await audit({ CONTROL_PLANE_TOKEN: TOKEN, CONTROL_PLANE_AUDIT_KEPT: '3' }).list(10);
    expect(kept).toBe(3);
    expect(actions.map((a) => a.detail.host)).toEqual(['h4.test', 'h3.test', 'h2.test']);
    expect(actions[0]).toEqual({
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      who: expect.stringMatching(/^token sha256:[0-9a-f]{16}$/),
      from: '::ffff:10.1.2.3',
      forwardedFor: '203.0.113.9',
      agent: 'curl/8',
      action: 'host-controls',
      detail: { host: 'h4.test', delayMs: 5000 },
    });
    expect(JSON.stringify(actions)).not.toContain(TOKEN);
    expect((await audit().list(10)).actions[0].who).toBe(actions[0].who);
    expect((await audit().list(1)).actions).toHaveLength(1);
  });
});

/** Every operator action through the HTTP API, in the audit of its own and in the log; the audit behind the token like other reads. */
describe('control plane: the operator audit over HTTP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-audit-'));
  const lines: string[] = [];
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    const config = loadConfig({ CONTROL_PLANE_TOKEN: TOKEN, FRONTIER_AUDIT_LENGTH: '10' }, { dataDir: dir, logLevel: 'info', port: 0 });
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger }), ControlPlaneModule] })
    class TestModule {}
    app = await NestFactory.create(TestModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
    expect(app.get(LOGGER)).toBe(logger);
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown, token: string | undefined = TOKEN) => {
    const response = await fetch(base + path, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('keeps a delay change after its host has been fetched many times, with every other action, and logs each as one JSON line', async () => {
    expect((await call('POST', '/seeds', { urls: ['http://a.test/', 'b.test'] })).status).toBe(201);
    expect((await call('POST', '/pause', { reason: 'site owner asked' })).status).toBe(200);
    expect((await call('POST', '/resume', {})).status).toBe(200);
    expect((await call('PATCH', '/hosts/a.test', { delayMs: 9000 })).status).toBe(200);
    // The host's own audit keeps its last FRONTIER_AUDIT_LENGTH entries: a few fetches push the change out.
    const frontier = app.get<FrontierStore>(FRONTIER_STORE);
    for (let i = 0; i < 12; i++) await frontier.audit('a.test', [JSON.stringify({ at: Date.now(), event: 'fetched', url: `http://a.test/${i}` })]);
    expect((await call('GET', '/hosts/a.test')).body.audit.some((e: { event: string }) => e.event === 'operator')).toBe(false);
    expect((await call('DELETE', '/hosts/a.test/queue', {})).status).toBe(200);
    expect((await call('POST', '/failed/replay', {})).status).toBe(200);

    expect((await call('GET', '/audit', undefined, '')).status).toBe(401);
    const audit = await call('GET', '/audit');
    expect(audit.status).toBe(200);
    expect(audit.body.kept).toBe(10_000);
    expect(audit.body.actions.map((a: { action: string }) => a.action)).toEqual(['replay-failed', 'host-purge', 'host-controls', 'resume', 'pause', 'seeds']);
    const [replay, purge, controls, , pause, seeds] = audit.body.actions;
    expect(controls).toMatchObject({
      who: expect.stringMatching(/^token sha256:/),
      from: expect.stringMatching(/127\.0\.0\.1$/),
      detail: { host: 'a.test', delayMs: 9000, delayInForceMs: 9000 },
    });
    expect(purge.detail).toEqual({ host: 'a.test', dropped: 0 });
    expect(pause.detail).toMatchObject({ reason: 'site owner asked' });
    expect(seeds.detail).toEqual({ count: 2, first: ['http://a.test/', 'https://b.test/'] });
    expect(replay.detail).toEqual({ queue: null, replayed: {} });
    expect((await call('GET', '/audit?limit=2')).body.actions).toHaveLength(2);
    expect((await call('GET', '/audit?limit=0')).status).toBe(400);

    const logged = lines.map((line) => JSON.parse(line)).filter((line) => line.event === 'operator-action');
    expect(logged.map((line) => line.action)).toEqual(['seeds', 'pause', 'resume', 'host-controls', 'host-purge', 'replay-failed']);
    expect(logged[3]).toMatchObject({ who: controls.who, detail: { host: 'a.test', delayMs: 9000 } });
    expect(lines.join('')).not.toContain(TOKEN);
  });
});
