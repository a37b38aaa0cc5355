import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { DownloaderMembership } from '@crawler/hash-ring';
import { MemoryStateStore } from '@crawler/state';
import { FrontierMetrics } from './frontier.metrics';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('FrontierMetrics', () => {
  it('reports the URLs queued and scheduled, the hosts, the leases in flight and the downloaders on the ring', async () => {
    const config = loadConfig({}, {});
    const store = new MemoryFrontierStore({ ...config.frontier, auditLength: 10 });
    const state = new MemoryStateStore();
    const registry = new Registry();
    new FrontierMetrics(store, state, config, registry);
    const now = Date.now();
    await store.enqueue(
      ['a.test', 'a.test', 'a.test', 'b.test', 'c.test'].map((host, i) => ({ host, priority: 0, item: `${host}/${i}` })),
      now,
    );
    await store.schedule([{ host: 'd.test', priority: 0, item: 'd.test/0', dueAt: now + 3_600_000 }]);
    expect(await store.claim({ now, max: 2, leaseMs: 60_000 })).toHaveLength(2);
    const membership = new DownloaderMembership(state.namespace('downloaders'), { heartbeatMs: config.downloader.heartbeatMs });
    await membership.heartbeat('dl-1');
    await membership.heartbeat('dl-2');

    const text = await registry.metrics();
    expect(sample(text, 'crawler_frontier_urls{state="queued"}')).toBe(3);
    expect(sample(text, 'crawler_frontier_urls{state="scheduled"}')).toBe(1);
    expect(sample(text, 'crawler_frontier_hosts')).toBe(3);
    expect(sample(text, 'crawler_frontier_leases')).toBe(2);
    expect(sample(text, 'crawler_downloaders')).toBe(2);
  });
});
