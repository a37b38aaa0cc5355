import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CrawlerConfig, loadConfig } from '@crawler/config';
import { CONTENT_STORE, ContentStore, FsContentStore } from '@crawler/content-store';
import { RecordsStore } from '@crawler/records';
import { MemoryStateStore, STATE_STORE, StateStore } from '@crawler/state';
import { createLogger } from '@crawler/logging';
import { DependencyWatch, HEALTH_CHECK_TIMEOUT_MS } from './dependency-watch.service';
import { HealthController } from './health.controller';
import { RedisMemoryGauge } from './redis-memory.service';
import { RuntimeModule } from './runtime.module';

describe('health endpoints over HTTP (the runtime with memory drivers)', () => {
  let app: INestApplication;
  let base: string;
  const dir = mkdtempSync(join(tmpdir(), 'health-'));

  beforeAll(async () => {
    const config = loadConfig({}, { dataDir: dir, logLevel: 'silent', port: 0 });
    const logger = createLogger({ level: config.logLevel, service: 'test-service' });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'test-service', config, logger })] })
    class TestModule {}
    app = await NestFactory.create(TestModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  });

  afterEach(() => jest.restoreAllMocks());

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async (path: string) => {
    const response = await fetch(base + path);
    return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
  };

  it('answers liveness without touching a dependency', async () => {
    const state = jest.spyOn(app.get<StateStore>(STATE_STORE), 'get');
    const content = jest.spyOn(app.get<ContentStore>(CONTENT_STORE), 'ping');
    const live = await get('/health/live');
    expect(live).toEqual({
      status: 200,
      type: expect.stringMatching(/^application\/json/),
      body: { service: 'test-service', status: 'ok', uptimeSeconds: expect.any(Number) },
    });
    expect(state).not.toHaveBeenCalled();
    expect(content).not.toHaveBeenCalled();
  });

  it('is ready when the state store and the content store answer, on /health/ready and /health alike', async () => {
    const ready = { service: 'test-service', status: 'ok', checks: { memory: 'ok', fs: 'ok' }, failing: [] };
    expect(await get('/health/ready')).toMatchObject({ status: 200, body: ready });
    expect(await get('/health')).toMatchObject({ status: 200, body: ready });
  });

  it('answers 503 with a JSON body naming the dependency that failed; liveness stays 200', async () => {
    jest.spyOn(app.get<ContentStore>(CONTENT_STORE), 'ping').mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:9000'));
    const unready = {
      service: 'test-service',
      status: 'unavailable',
      checks: { memory: 'ok', fs: 'connect ECONNREFUSED 127.0.0.1:9000' },
      failing: ['fs'],
    };
    expect(await get('/health/ready')).toEqual({ status: 503, type: expect.stringMatching(/^application\/json/), body: unready });
    expect(await get('/health')).toMatchObject({ status: 503, body: unready });
    expect((await get('/health/live')).status).toBe(200);
  });
});

describe('HealthController', () => {
  const dir = mkdtempSync(join(tmpdir(), 'health-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => jest.useRealTimers());
  /** Records kept in the state store (no server of their own to ping), and a Redis never at its memory limit. */
  const inStateStore = {} as RecordsStore;
  const roomy = { read: async () => null } as unknown as RedisMemoryGauge;

  const quiet = createLogger({ level: 'silent', service: 'test' });
  /** The health routes of `service` over these stores, as the runtime builds them. */
  function healthOf(
    service: string,
    config: CrawlerConfig,
    state: StateStore,
    content: ContentStore,
    records: RecordsStore,
    gauge: RedisMemoryGauge,
    staysReady = false,
  ) {
    return new HealthController(service, new DependencyWatch(service, config, state, content, records, gauge, quiet), staysReady);
  }

  /** A controller configured as the distributed shape (Redis, S3), over stores the test controls. */
  function controller(state: Partial<StateStore>, content: Partial<ContentStore>) {
    const config = loadConfig({}, { redisUrl: 'redis://redis.test:6379', s3Url: 'http://s3.test:9000' });
    return healthOf('downloader', config, state as StateStore, content as ContentStore, inStateStore, roomy);
  }
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected a 503');
      },
      (error) => ({ status: error.getStatus(), body: error.getResponse() }),
    );

  it('names the dependencies after their drivers: redis and s3', async () => {
    const healthy = controller(new MemoryStateStore(), new FsContentStore(dir));
    expect(await healthy.ready()).toEqual({ service: 'downloader', status: 'ok', checks: { redis: 'ok', s3: 'ok' }, failing: [] });
  });

  it('reports both dependencies when both fail', async () => {
    const broken = controller(
      { get: () => Promise.reject(new Error('Connection is closed.')) },
      { ping: () => Promise.reject(new Error('bucket crawl does not exist')) },
    );
    expect(await failure(broken.ready())).toEqual({
      status: 503,
      body: { service: 'downloader', status: 'unavailable', checks: { redis: 'Connection is closed.', s3: 'bucket crawl does not exist' }, failing: ['redis', 's3'] },
    });
  });

  it("checks the records' PostgreSQL when the store has a server of its own, naming it postgresql", async () => {
    const config = loadConfig({}, { redisUrl: 'redis://redis.test:6379', s3Url: 'http://s3.test:9000' });
    const records = (ping?: () => Promise<void>) => ({ ...(ping ? { ping } : {}) }) as unknown as RecordsStore;
    const away = healthOf(
      'content-seen',
      config,
      new MemoryStateStore(),
      new FsContentStore(dir),
      records(() => Promise.reject(new Error('records store: PostgreSQL unavailable: connect ECONNREFUSED 127.0.0.1:5432'))),
      roomy,
    );
    expect(await failure(away.ready())).toEqual({
      status: 503,
      body: {
        service: 'content-seen',
        status: 'unavailable',
        checks: { redis: 'ok', s3: 'ok', postgresql: 'records store: PostgreSQL unavailable: connect ECONNREFUSED 127.0.0.1:5432' },
        failing: ['postgresql'],
      },
    });
    const back = healthOf(
      'content-seen',
      config,
      new MemoryStateStore(),
      new FsContentStore(dir),
      records(() => Promise.resolve()),
      roomy,
    );
    expect((await back.ready()).checks).toEqual({ redis: 'ok', s3: 'ok', postgresql: 'ok' });
    // Records kept in Redis (or memory) have no server of their own: the state store's check covers them.
    expect((await healthOf('content-seen', config, new MemoryStateStore(), new FsContentStore(dir), records(), roomy).ready()).checks).toEqual({
      redis: 'ok',
      s3: 'ok',
    });
  });

  it('gives up on a dependency that does not answer within HEALTH_CHECK_TIMEOUT_MS', async () => {
    jest.useFakeTimers();
    const hung = controller({ get: () => new Promise<never>(() => undefined) }, { ping: () => Promise.resolve() });
    const answer = failure(hung.ready());
    await jest.advanceTimersByTimeAsync(HEALTH_CHECK_TIMEOUT_MS);
    expect(await answer).toEqual({
      status: 503,
      body: expect.objectContaining({ checks: { redis: `no answer within ${HEALTH_CHECK_TIMEOUT_MS} ms`, s3: 'ok' }, failing: ['redis'] }),
    });
  });

  it('is not ready while Redis is at its memory limit, saying so under redis', async () => {
    const config = loadConfig({}, { redisUrl: 'redis://redis.test:6379', s3Url: 'http://s3.test:9000' });
    const gauge = { read: async () => ({ usedBytes: 10 * 1048576, maxBytes: 10 * 1048576, full: true }) } as unknown as RedisMemoryGauge;
    const full = healthOf('frontier', config, new MemoryStateStore(), new FsContentStore(dir), inStateStore, gauge);
    const answer = await failure(full.ready());
    expect(answer).toMatchObject({ status: 503, body: { failing: ['redis'] } });
    expect(answer.body.checks.redis).toMatch(/^Redis memory full: used 10\.0 MiB of maxmemory 10\.0 MiB; intake paused/);
  });

  it('is no longer ready once the service is shutting down, though still live', async () => {
    const draining = controller(new MemoryStateStore(), new FsContentStore(dir));
    draining.beforeApplicationShutdown();
    expect(await failure(draining.ready())).toEqual({ status: 503, body: { service: 'downloader', status: 'draining', checks: { redis: 'ok', s3: 'ok' }, failing: [] } });
    expect(draining.live()).toMatchObject({ status: 'ok' });
  });

  it('keeps the control plane ready through an outage, saying degraded and what failed', async () => {
    const config = loadConfig({}, { redisUrl: 'redis://redis.test:6379', s3Url: 'http://s3.test:9000' });
    const down = { get: () => Promise.reject(new Error('Connection is closed.')) } as unknown as StateStore;
    const control = healthOf('control-plane', config, down, new FsContentStore(dir), inStateStore, roomy, true);
    expect(await control.ready()).toEqual({ service: 'control-plane', status: 'degraded', checks: { redis: 'Connection is closed.', s3: 'ok' }, failing: ['redis'] });
    // Draining still takes it out.
    control.beforeApplicationShutdown();
    expect(await failure(control.ready())).toMatchObject({ status: 503, body: { status: 'draining' } });
  });

  it('checks only the stores a service uses: an S3 outage leaves the URL filter ready and the downloader not', async () => {
    const config = loadConfig({}, { redisUrl: 'redis://redis.test:6379', s3Url: 'http://s3.test:9000' });
    const s3Down = { ping: () => Promise.reject(new Error('content store: connect ECONNREFUSED 127.0.0.1:9000')) } as unknown as ContentStore;
    const filter = healthOf('url-filter', config, new MemoryStateStore(), s3Down, inStateStore, roomy);
    expect(await filter.ready()).toEqual({ service: 'url-filter', status: 'ok', checks: { redis: 'ok' }, failing: [] });
    const downloader = healthOf('downloader', config, new MemoryStateStore(), s3Down, inStateStore, roomy);
    expect(await failure(downloader.ready())).toMatchObject({ status: 503, body: { failing: ['s3'] } });
    // Several services in one process check what any of them uses.
    const together = healthOf('frontier+content-parser', config, new MemoryStateStore(), s3Down, inStateStore, roomy);
    expect(await failure(together.ready())).toMatchObject({ status: 503, body: { failing: ['s3'] } });
  });

  it('knows what is down since when without waiting on it (DependencyWatch.outages), and forgets it once it is back', async () => {
    const config = loadConfig({}, { redisUrl: 'redis://redis.test:6379', s3Url: 'http://s3.test:9000' });
    let up = false;
    const state = { get: () => (up ? Promise.resolve(null) : Promise.reject(new Error('Connection is closed.'))) } as unknown as StateStore;
    const watch = new DependencyWatch('url-filter', config, state, new FsContentStore(dir), inStateStore, roomy, quiet);
    expect(watch.outages()).toEqual([]);
    const before = Date.now();
    expect(await watch.check()).toEqual({ redis: 'Connection is closed.' });
    const [outage] = watch.outages();
    expect(outage).toEqual({ dependency: 'redis', since: expect.any(String), error: 'Connection is closed.' });
    expect(Date.parse(outage.since)).toBeGreaterThanOrEqual(before);
    // A second failed check keeps the first one's time.
    await watch.check();
    expect(watch.outages()[0].since).toBe(outage.since);
    up = true;
    await watch.check();
    expect(watch.outages()).toEqual([]);
  });
});
