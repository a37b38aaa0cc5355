import { loadConfig } from '@crawler/config';
import type { DependencyOutage, DependencyWatch } from '@crawler/runtime';
import type { CrawlControlService, CrawlStatus } from './crawl-control.service';
import { LiveStatus } from './live-status.service';

describe('LiveStatus: GET /status within CONTROL_PLANE_STATUS_TIMEOUT_MS', () => {
  const config = loadConfig({}, { 'controlPlane.statusTimeoutMs': 200 });
  let next: () => Promise<CrawlStatus>;
  let calls = 0;
  let outages: DependencyOutage[] = [];
  const control = {
    status: () => {
      calls++;
      return next();
    },
  } as unknown as CrawlControlService;
  const watch = { outages: () => outages } as unknown as DependencyWatch;
  const reading = (fetched: number, at = new Date().toISOString()) =>
    ({ complete: false, pending: 3, totals: { fetched }, waitingOn: null, at }) as unknown as CrawlStatus;

  it('answers a fresh reading, then, while reading hangs, the last one at once: stale, its age, what is down', async () => {
    const live = new LiveStatus(control, watch, config);
    next = async () => reading(5);
    expect(await live.current()).toMatchObject({ totals: { fetched: 5 }, stale: false, ageMs: 0, readError: null, outages: [] });

    // Redis goes away: a reading never ends (commands wait for the connection).
    let release!: (s: CrawlStatus) => void;
    next = () => new Promise((resolve) => (release = resolve));
    outages = [{ dependency: 'redis', since: '2026-11-28T08:00:00.000Z', error: 'Connection is closed.' }];
    calls = 0;
    const started = Date.now();
    const [a, b] = await Promise.all([live.current(), live.current()]);
    expect(Date.now() - started).toBeLessThan(1000);
    // Both callers shared one reading.
    expect(calls).toBe(1);
    expect(a).toMatchObject({
      totals: { fetched: 5 },
      stale: true,
      readError: 'no fresh reading within 200 ms (CONTROL_PLANE_STATUS_TIMEOUT_MS)',
      outages,
      waitingOn: 'redis unavailable since 2026-11-28T08:00:00.000Z (Connection is closed.)',
    });
    expect(a.ageMs).toBeGreaterThanOrEqual(200);
    expect(b.stale).toBe(true);

    // The reading that was waiting comes back after its callers gave up: it is the figures kept from then on.
    release(reading(9));
    await new Promise((r) => setImmediate(r));
    next = () => Promise.reject(new Error('Reached the max retries per request limit (which is 20)'));
    expect(await live.current()).toMatchObject({ totals: { fetched: 9 }, stale: true, readError: 'Reached the max retries per request limit (which is 20)' });
  });

  it('says nothing is known yet when no reading ever succeeded, and concludes nothing from it', async () => {
    const live = new LiveStatus(control, watch, config);
    next = () => new Promise<never>(() => undefined);
    const status = await live.current();
    expect(status).toMatchObject({ complete: false, stale: true, totals: {}, stages: [], at: new Date(0).toISOString() });
  });
});
