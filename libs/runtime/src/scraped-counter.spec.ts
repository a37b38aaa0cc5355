import { Registry } from 'prom-client';
import { ScrapedCounter } from './scraped-counter';

describe('ScrapedCounter', () => {
  it('shows at every scrape exactly what its cells counted, each label set its own series', async () => {
    const registry = new Registry();
    const jobs = new ScrapedCounter({ name: 'jobs_total', help: 'jobs', labelNames: ['queue', 'outcome'], registers: [registry] });
    const done = jobs.cell({ queue: 'fetch', outcome: 'completed' });
    expect(jobs.cell({ outcome: 'completed', queue: 'fetch' })).toBe(done);
    done.n += 2;
    jobs.cell({ queue: 'fetch', outcome: 'failed' }).n++;
    expect(await registry.metrics()).toContain('jobs_total{queue="fetch",outcome="completed"} 2\n');
    expect(await registry.metrics()).toContain('jobs_total{queue="fetch",outcome="failed"} 1\n');
    done.n++;
    expect(await registry.metrics()).toContain('jobs_total{queue="fetch",outcome="completed"} 3\n');
  });
});
