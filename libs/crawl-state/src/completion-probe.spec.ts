import pino from 'pino';
import { Registry } from 'prom-client';
import { CrawlerConfig, loadConfig } from '@crawler/config';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { fetchQueue, QueueName } from '@crawler/contracts';
import { DownloaderMembership } from '@crawler/hash-ring';
import { MemoryQueueTransport } from '@crawler/queue';
import { CrawlStats, RedisMemoryGauge } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { CompletionProbe } from './completion-probe.service';
import { describeWaiting, HostsAside } from './hosts-aside.service';

/** Without a Redis URL the gauge reads nothing: memory is never full. */
const gauge = (config: CrawlerConfig) => new RedisMemoryGauge(config, pino({ enabled: false }));

function setup() {
  const config = loadConfig({});
  const state = new MemoryStateStore();
  const store = new MemoryFrontierStore({ ...config.frontier, auditLength: 10 });
  const aside = new HostsAside(state);
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  return { store, aside, probe: new CompletionProbe(new MemoryQueueTransport(), store, stats, config, aside, gauge(config), state) };
}

const waiting = (host: string) => ({
  host,
  since: '2030-01-01T00:00:00.000Z',
  nextTryAt: '2030-01-01T00:01:00.000Z',
  giveUpAt: '2030-01-01T00:30:00.000Z',
  tries: 1,
  status: 500,
});

describe('CompletionProbe: a crawl that only waits for robots.txt', () => {
  it('names the waiting hosts when they hold all the work left, and nothing otherwise', async () => {
    const { store, aside, probe } = setup();
    await store.enqueue(
      [
        { host: 'down.test', priority: 0, item: 'a' },
        { host: 'down.test', priority: 0, item: 'b' },
      ],
      Date.now(),
    );
    await aside.waiting(waiting('down.test'), 60_000);
    const snapshot = await probe.snapshot();
    expect(snapshot.pending).toBe(2);
    expect(snapshot.waitingOnRobots).toEqual({ count: 1, hosts: [waiting('down.test')] });
    expect(describeWaiting(snapshot.waitingOnRobots!)).toBe(
      'only waiting for the robots.txt of 1 host (5xx, 429 or unreachable): down.test (answered 500; next try 2030-01-01T00:01:00.000Z, given up at 2030-01-01T00:30:00.000Z)',
    );
    // Another host with work: the crawl is not only waiting.
    await store.enqueue([{ host: 'up.test', priority: 0, item: 'c' }], Date.now());
    expect((await probe.snapshot()).waitingOnRobots).toBeUndefined();
  });
});

describe('CompletionProbe: a crawl left with only hosts backed off for timeouts', () => {
  it('does not count their URLs as pending (the crawl ends and names them), unless other work is left', async () => {
    const { store, aside, probe } = setup();
    await store.enqueue(
      [
        { host: 'slow.test', priority: 0, item: 'a' },
        { host: 'slow.test', priority: 0, item: 'b' },
      ],
      Date.now(),
    );
    expect((await probe.snapshot()).pending).toBe(2);
    await aside.backedOff('slow.test', '3 timeouts in a row', Date.now() + 60_000, 2);
    const snapshot = await probe.snapshot();
    expect(snapshot.pending).toBe(0);
    expect(snapshot.backedOff).toEqual([expect.objectContaining({ host: 'slow.test', reason: 'timeouts', urls: 2 })]);
    // Another host with work: the crawl goes on (and the slow host gets its turn if the back-off ends first).
    await store.enqueue([{ host: 'up.test', priority: 0, item: 'c' }], Date.now());
    const busy = await probe.snapshot();
    expect(busy.pending).toBe(3);
    expect(busy.backedOff).toBeUndefined();
    // An answer takes it off the list: its URLs are work again.
    const fresh = setup();
    await fresh.store.enqueue([{ host: 'slow.test', priority: 0, item: 'a' }], Date.now());
    await fresh.aside.backedOff('slow.test', '3 timeouts in a row', Date.now() + 60_000, 1);
    await fresh.aside.answered('slow.test');
    expect((await fresh.probe.snapshot()).pending).toBe(1);
    expect(await fresh.aside.listSetAside()).toEqual([]);
  });
});

describe('CompletionProbe: failed work and outages', () => {
  function withQueues(transport: MemoryQueueTransport) {
    const config = loadConfig({});
    const state = new MemoryStateStore();
    const store = new MemoryFrontierStore({ ...config.frontier, auditLength: 10 });
    const stats = new CrawlStats(state, new Registry(), loadConfig({}));
    return { stats, probe: new CompletionProbe(transport, store, stats, config, new HostsAside(state), gauge(config), state) };
  }
  const message = { v: 1 as const, urls: [{ url: 'http://a.test/', depth: 0, source: 'seed' as const, hops: 0 }] };

  it('never calls a crawl with failed work complete, and names that work', async () => {
    const transport = new MemoryQueueTransport({ attempts: 1 });
    const { stats, probe } = withQueues(transport);
    await stats.count('processed.filter-urls');
    await transport.consume(QueueName.FrontierAdd, async () => {
      throw new TypeError('a bug');
    });
    await transport.add(QueueName.FrontierAdd, message);
    await new Promise((r) => setTimeout(r, 50));
    expect(await probe.isComplete(10)).toBe(false);
    expect(await probe.waitForCompletion({ pollMs: 10, settleMs: 10 })).toBe(false);
    const snapshot = await probe.snapshot();
    expect(snapshot.failed).toEqual({ 'frontier-add': 1 });
    expect(snapshot.waitingOn).toBe('failed work left (frontier-add: 1): see GET /failed or npm run failed, and replay it once the cause is fixed');
    await transport.close();
  });

  it('names messages retrying after an outage, which keep the crawl from completing', async () => {
    const transport = new MemoryQueueTransport({ attempts: 1, backoffMs: 60_000 });
    const { stats, probe } = withQueues(transport);
    await stats.count('processed.filter-urls');
    await transport.consume(QueueName.FrontierAdd, async () => {
      throw new Error('content store: put s3://b/k failed (ECONNREFUSED): connect ECONNREFUSED');
    });
    await transport.add(QueueName.FrontierAdd, message);
    await new Promise((r) => setTimeout(r, 50));
    const snapshot = await probe.snapshot();
    expect(snapshot.pending).toBe(1);
    expect(snapshot.failed).toEqual({});
    expect(snapshot.outageRetries).toEqual({ 'frontier-add': { messages: 1, causes: { s3: 1 }, since: expect.any(String) } });
    expect(snapshot.waitingOn).toMatch(/^1 message of frontier-add retrying after S3 errors since \d{4}-/);
    await transport.close();
  });

  it("names a live downloader's fetch jobs retrying after an outage (its own queue, fetch.<id>)", async () => {
    const transport = new MemoryQueueTransport({ attempts: 1, backoffMs: 60_000 });
    const config = loadConfig({});
    const state = new MemoryStateStore();
    const store = new MemoryFrontierStore({ ...config.frontier, auditLength: 10 });
    const stats = new CrawlStats(state, new Registry(), loadConfig({}));
    const probe = new CompletionProbe(transport, store, stats, config, new HostsAside(state), gauge(config), state);
    await new DownloaderMembership(state.namespace('downloaders')).heartbeat('d1');
    await stats.count('processed.fetch');
    const shard = fetchQueue('d1');
    await transport.consume(shard, async () => {
      throw new Error('content store: put s3://b/staging/k failed (ECONNREFUSED): connect ECONNREFUSED');
    });
    await transport.add(shard, {
      v: 1,
      url: 'http://a.test/',
      depth: 0,
      source: 'seed',
      host: 'a.test',
      leaseId: 'l1',
      leaseExpiresAt: Date.now() + 60_000,
      fetchId: 'f1',
      ip: '127.0.0.1',
      hops: 0,
    } as never);
    await new Promise((r) => setTimeout(r, 50));
    const snapshot = await probe.snapshot();
    expect(snapshot.pending).toBe(1);
    expect(snapshot.outageRetries).toEqual({ 'fetch.d1': { messages: 1, causes: { s3: 1 }, since: expect.any(String) } });
    expect(snapshot.waitingOn).toMatch(/^1 message of fetch\.d1 retrying after S3 errors since \d{4}-/);
    await transport.close();
  });
});
