import { Registry } from 'prom-client';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { loadConfig } from '@crawler/config';
import { DispatchLateness } from './dispatch-lateness.metric';

describe('DispatchLateness', () => {
  it("counts each claim by how long after its host's turn it was handed out", async () => {
    const config = loadConfig({}, {});
    const store = new MemoryFrontierStore({ ...config.frontier, auditLength: 10 });
    const registry = new Registry();
    const lateness = new DispatchLateness(registry);
    const now = 1_000_000;
    await store.enqueue(
      [
        { host: 'a.test', priority: 0, item: 'a/1' },
        { host: 'b.test', priority: 0, item: 'b/1' },
      ],
      now,
    );
    lateness.observe(await store.claim({ now: now + 300, max: 10, leaseMs: 60_000 }), now + 300);

    const text = await registry.metrics();
    expect(text).toContain('crawler_frontier_dispatch_lateness_seconds_count 2');
    expect(text).toContain('crawler_frontier_dispatch_lateness_seconds_bucket{le="0.25"} 0');
    expect(text).toContain('crawler_frontier_dispatch_lateness_seconds_bucket{le="0.5"} 2');
  });
});
