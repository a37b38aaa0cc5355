import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { FetchOutcome } from '@crawler/contracts';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { CrawlStats } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { DispatchSignal } from './dispatch-signal';
import { decodeEntry } from './frontier-entry';
import { FrontierService } from './frontier.service';
import { DefaultPrioritizer } from './prioritizer';

function frontier() {
  const config = loadConfig({}, { 'frontier.maxRetries': 2 });
  const store = new MemoryFrontierStore({ ...config.frontier, auditLength: 10 });
  const stats = new CrawlStats(new MemoryStateStore(), new Registry());
  const service = new FrontierService(store, new DefaultPrioritizer(), config, { debug() {} } as any, stats, new DispatchSignal());
  return { service, store, stats };
}

describe('FrontierService', () => {
  it('defers a host whose robots.txt is unreachable, then gives up on all its URLs after the retry limit', async () => {
    const { service, store, stats } = frontier();
    await service.add(['/1', '/2', '/3'].map((p) => ({ url: `http://a.test${p}`, depth: 1, source: 'link' as const, hops: 0 })));
    let turns = 0;
    for (;;) {
      const [claim] = await store.claim({ now: Date.now() + 5, max: 1, leaseMs: 60_000 });
      if (!claim) break;
      turns++;
      const retry = decodeEntry(claim.item);
      const outcome: FetchOutcome = { v: 1, leaseId: claim.leaseId, fetchId: 'f', url: retry.url, host: claim.host, kind: 'deferred', requested: false, durationMs: 0, retryAfterMs: 0, retry };
      await service.done(outcome);
    }
    expect(turns).toBe(3); // the first URL: 2 deferrals kept it, the 3rd gave up on the host
    expect((await store.stats()).size).toBe(0);
    expect((await stats.totals())['disallowed.robots-unreachable']).toBe(3);
    await service.add([{ url: 'http://a.test/4', depth: 1, source: 'link', hops: 0 }]);
    expect(await store.claim({ now: Date.now(), max: 1, leaseMs: 60_000 })).toEqual([]);
  });
});
