import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawler/config';
import { CrawlActivity, PolitenessFloor } from '@crawler/crawl-state';
import { RuntimeModule } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';
import { createLogger } from '@crawler/logging';
import { ControlPlaneModule } from './control-plane.module';

/** The RuntimeModule's logger; the configuration below logs nothing (LOG_LEVEL silent). */
const logger = createLogger({ level: 'silent', service: 'control-plane' });

/** PATCH /hosts/:host may raise a host's delay freely; under the crawl-wide minimum only by a setting, audited and listed. */
describe('control plane: host delay overrides and the politeness floor', () => {
  const dirs: string[] = [];
  const apps: INestApplication[] = [];

  async function start(env: Record<string, string>): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'cp-floor-'));
    dirs.push(dir);
    const config = loadConfig({ FRONTIER_MIN_DELAY_MS: '2000', ...env }, { dataDir: dir, logLevel: 'silent', port: 0 });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'control-plane', config, logger }), ControlPlaneModule] })
    class TestModule {}
    const app = await NestFactory.create(TestModule, { logger: false });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return `http://127.0.0.1:${app.getHttpServer().address().port}`;
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const call = async (base: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('refuses a delay below the crawl-wide minimum (delayMs: 0 would take a host from 2 s to ~20 ms), naming the setting', async () => {
    const base = await start({});
    const zero = await call(base, 'PATCH', '/hosts/a.test', { delayMs: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.message).toMatch(/delayMs: 0 ms is below the crawl-wide minimum of 2000 ms.*FRONTIER_ALLOW_DELAY_BELOW_MIN/);
    expect((await call(base, 'PATCH', '/hosts/a.test', { delayMs: 1999 })).status).toBe(400);
    expect((await call(base, 'GET', '/hosts/a.test')).body.delayMs ?? null).toBeNull();
    // Raising it, or going back to the computed delay, needs no setting; each change is in the host's audit.
    const raised = await call(base, 'PATCH', '/hosts/a.test', { delayMs: 2000 });
    expect(raised.status).toBe(200);
    expect(raised.body.audit).toEqual([expect.objectContaining({ event: 'operator', delayMs: 2000, minDelayMs: 2000 })]);
    expect((await call(base, 'PATCH', '/hosts/a.test', { delayMs: null })).status).toBe(200);
    expect((await call(base, 'GET', '/status')).body.belowFloor).toEqual([]);
  });

  it('with FRONTIER_ALLOW_DELAY_BELOW_MIN, accepts it, writes it to the politeness audit and lists the host in the status', async () => {
    const base = await start({ FRONTIER_ALLOW_DELAY_BELOW_MIN: 'true' });
    const fast = await call(base, 'PATCH', '/hosts/b.test', { delayMs: 20 });
    expect(fast.status).toBe(200);
    expect(fast.body.delayMs).toBe(20);
    expect(fast.body.audit).toEqual([expect.objectContaining({ event: 'operator', delayMs: 20, minDelayMs: 2000, belowFloor: true })]);
    await call(base, 'PATCH', '/hosts/c.test', { delayMs: 5000 });
    expect((await call(base, 'GET', '/status')).body.belowFloor).toEqual([{ host: 'b.test', delayMs: 20, minDelayMs: 2000 }]);
    // Back at or above the floor: no longer listed.
    await call(base, 'PATCH', '/hosts/b.test', { delayMs: 3000 });
    expect((await call(base, 'GET', '/status')).body.belowFloor).toEqual([]);
    const purge = await call(base, 'DELETE', '/hosts/b.test/queue');
    expect(purge.body).toEqual({ host: 'b.test', dropped: 0 });
    expect((await call(base, 'GET', '/hosts/b.test')).body.audit.at(-1)).toMatchObject({ event: 'operator-purge', dropped: 0 });
  });

  it('reports what is in force: a frontier that holds its 1000 ms floor keeps a 100 ms override at 1000 ms, in the audit, the status and top hosts', async () => {
    const base = await start({ FRONTIER_MIN_DELAY_MS: '1000', FRONTIER_ALLOW_DELAY_BELOW_MIN: 'true' });
    // The frontier, started without FRONTIER_ALLOW_DELAY_BELOW_MIN, publishes the floor it holds.
    const frontierConfig = loadConfig({ FRONTIER_MIN_DELAY_MS: '1000' }, { logLevel: 'silent' });
    await new PolitenessFloor(apps.at(-1)!.get<StateStore>(STATE_STORE), frontierConfig).publish();
    const held = await call(base, 'PATCH', '/hosts/d.test', { delayMs: 100 });
    expect(held.status).toBe(200);
    expect(held.body.audit.at(-1)).toEqual(expect.objectContaining({ event: 'operator', delayMs: 100, delayInForceMs: 1000, minDelayMs: 1000, heldToFloor: true }));
    expect(held.body.audit.at(-1).belowFloor).toBeUndefined();
    await apps
      .at(-1)!
      .get(CrawlActivity)
      .recordOutcome({ host: 'd.test', url: 'http://d.test/', requested: true, kind: 'fetched', status: 200 } as any);
    const status = (await call(base, 'GET', '/status')).body;
    expect(status.belowFloor).toEqual([]);
    expect(status.topHosts).toEqual([expect.objectContaining({ host: 'd.test', delayMs: 1000, delayCause: 'floor' })]);
    // A frontier that allows it: the override is in force, listed and audited as below the floor.
    await new PolitenessFloor(
      apps.at(-1)!.get<StateStore>(STATE_STORE),
      loadConfig({ FRONTIER_MIN_DELAY_MS: '1000', FRONTIER_ALLOW_DELAY_BELOW_MIN: 'true' }, { logLevel: 'silent' }),
    ).publish();
    const fast = await call(base, 'PATCH', '/hosts/d.test', { delayMs: 100 });
    expect(fast.body.audit.at(-1)).toEqual(expect.objectContaining({ delayMs: 100, delayInForceMs: 100, minDelayMs: 1000, belowFloor: true }));
    const allowed = (await call(base, 'GET', '/status')).body;
    expect(allowed.belowFloor).toEqual([{ host: 'd.test', delayMs: 100, minDelayMs: 1000 }]);
    expect(allowed.topHosts).toEqual([expect.objectContaining({ host: 'd.test', delayMs: 100, delayCause: 'operator' })]);
  });
});
