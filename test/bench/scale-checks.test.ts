import { latenessQuantile } from '../../bench/scale/control-plane-readings';
import { PACE_CHECK, scaleChecks } from '../../bench/scale/scale-checks';
import { mergeScaleResults, scaleChart, scaleMarkdown, type ScaleResults } from '../../bench/scale/scale-report';
import type { ScaleSample, ShapeRun } from '../../bench/scale/scale-sample';
import { scaleSettings } from '../../bench/scale/scale-settings';
import type { ScaleObservation } from '../../bench/web/scale-web-observer';

const MiB = 2 ** 20;
const LIMITS = { perHostLimit: 1, perIpLimit: 8, perSharedAddress: 24, delayMs: 1000 };

/** A sample every 10 s at `rate(pages)` pages/s, the crawl process at `rss(pages)` MiB. */
function samples(total: number, rate: (pages: number) => number, rss: (pages: number) => number): ScaleSample[] {
  const out: ScaleSample[] = [];
  let pages = 0;
  for (let seconds = 0; ; seconds += 10) {
    out.push({
      seconds,
      pagesFetched: pages,
      pagesPerSecond: 0,
      requests: pages,
      processes: { crawl: { rssBytes: rss(pages) * MiB, heapUsedBytes: 50 * MiB, cpuCores: 0.9, eventLoopP99Ms: 20 } },
      redis: [{ address: '127.0.0.1:7000', usedMemoryBytes: 10 * MiB, lastingKeys: 10, lastingBytes: 50 * pages, expiringKeys: 1, expiringBytes: 1000 }],
      postgresBytes: 100 * pages,
      storeBytes: 9000 * pages,
      frontierQueued: 10,
      frontierHosts: 5,
      frontierLeases: 2,
      dispatchP50Ms: 5,
      dispatchP99Ms: 50,
      controlPlane: { status: 120, host: 30 },
    });
    if (pages >= total) return out;
    pages = Math.min(total, pages + rate(pages) * 10);
  }
}

function run(s: ScaleSample[], web: Partial<ScaleObservation> = {}): ShapeRun {
  const observation: ScaleObservation = {
    requests: 12_000,
    robotsRequests: 100,
    pagesServed: 10_300,
    pagesFetched: 10_000,
    reachablePages: 10_000,
    bytes: 1e9,
    byStatus: { '200': 11_000 },
    repeatsByKind: {},
    repeatRequests: 0,
    robotsViolations: 0,
    beforeRobots: 0,
    otherRequests: 0,
    hostsVisited: 100,
    maxInFlightPerHost: 1,
    tooClose: 0,
    minIntervalMs: 1000,
    minCrawlDelayIntervalMs: 1001,
    maxInFlightPerSharedAddress: 8,
    maxInFlightPerOwnAddress: 1,
    maxInFlight: 40,
    inFlight: 0,
    ...web,
  };
  return {
    shape: 'distributed',
    settings: '',
    complete: true,
    notes: [],
    seconds: s[s.length - 1].seconds,
    samples: s,
    web: observation,
    lost: { count: 0, urls: [] },
    reclaimed: 0,
  };
}

const failed = (r: ShapeRun) =>
  scaleChecks(r, LIMITS)
    .filter((c) => !c.pass)
    .map((c) => c.name);

describe('the scale targets', () => {
  it('pass a crawl that keeps its pace, its memory and its manners', () => {
    expect(
      failed(
        run(
          samples(
            10_000,
            () => 100,
            () => 300,
          ),
        ),
      ),
    ).toEqual([]);
  });

  it('fail a crawl that slows down, grows, or loses, repeats or misbehaves, naming each', () => {
    const slowing = samples(
      10_000,
      (pages) => (pages < 9000 ? 100 : 40),
      (pages) => 300 + pages / 50,
    );
    const names = failed(run(slowing, { repeatRequests: 3, robotsViolations: 1, tooClose: 2, maxInFlightPerSharedAddress: 25 }));
    expect(names).toEqual([
      PACE_CHECK,
      'crawl: RSS at the end ≤ 1.2 × RSS at 20%',
      'no repeat fetch beyond the leases in flight at a kill or handed out again',
      'robots.txt obeyed: nothing disallowed fetched, robots.txt first',
      'politeness per host: in flight ≤ limit, request starts ≥ delay (Crawl-delay kept)',
      'politeness per address: in flight ≤ the per-IP limit (grown by the domains on a shared address)',
    ]);
  });

  it("judge the pace by requests, so that a tail spent on the web's other URLs is not taken for a slowdown", () => {
    // 100 requests/s throughout; pages are half of them up to 90%, a tenth of them after.
    const shifting = samples(
      10_000,
      () => 100,
      () => 300,
    ).map((s) => ({
      ...s,
      redis: [],
      requests: s.pagesFetched,
      pagesFetched: Math.round(s.pagesFetched <= 9000 ? s.pagesFetched / 2 : 4500 + (s.pagesFetched - 9000) / 10),
    }));
    const crawl = run(shifting, { reachablePages: 4600, pagesFetched: 4600 });
    expect(failed(crawl)).toEqual([]);
    expect(scaleChecks(crawl, LIMITS).find((c) => c.name === PACE_CHECK)?.detail).toMatch(
      /^100\.0 vs 100\.0 requests\/s; pages\/s 26\.7 over the last tenth of the pages vs 50\.0/,
    );
  });

  it('judge Redis by the bytes per page of the keys that do not expire, and the control plane by its slowest answer', () => {
    const heavy = samples(
      10_000,
      () => 100,
      () => 300,
    ).map((s) => ({ ...s, redis: [{ ...s.redis[0], lastingBytes: 90 * s.pagesFetched }], controlPlane: { status: 700, host: null } }));
    expect(failed(run(heavy))).toEqual(['Redis bytes per page in keys that do not expire ≤ 80', 'control plane answers every endpoint in < 500 ms']);
  });

  it('after a kill, allows the repeats in flight then and judges memory from 10% past it', () => {
    const killed = {
      ...run(
        samples(
          10_000,
          () => 100,
          (pages) => (pages < 5000 ? 500 : 300),
        ),
        { repeatRequests: 4 },
      ),
    };
    killed.resume = { killedAt: 0.5, pagesAtKill: 5000, inFlightAtKill: 4, rateBeforeKill: 100, secondsToFullSpeed: 10, restartSeconds: 2 };
    const checks = scaleChecks(killed, LIMITS);
    expect(checks.filter((c) => !c.pass)).toEqual([]);
    expect(checks.map((c) => c.name)).toContain('crawl: RSS at the end ≤ 1.2 × RSS at 60%');
  });
});

describe('the scale report', () => {
  const settings = scaleSettings({ SCALE_PAGES: '10000', SCALE_HOSTS: '100', SCALE_ENV: 'FRONTIER_PER_IP_LIMIT=32' });
  const r = run(
    samples(
      10_000,
      () => 100,
      () => 300,
    ),
  );
  const results: ScaleResults = {
    at: '2026-01-01T00:00:00.000Z',
    machine: { cpus: 2, model: 'test', memoryBytes: 8 * 2 ** 30 },
    settings,
    runs: [r],
    checks: scaleChecks(r, LIMITS),
  };

  it('reads its settings from the environment, SCALE_ENV as pairs', () => {
    expect(settings).toMatchObject({ pages: 10_000, hosts: 100, pagesPerHost: 100, sampleMs: 60_000, env: { FRONTIER_PER_IP_LIMIT: '32' } });
    expect(() => scaleSettings({ SCALE_SHAPES: 'cloud' })).toThrow(/SCALE_SHAPES/);
    expect(() => scaleSettings({ SCALE_KILL_AT: '2' })).toThrow(/SCALE_KILL_AT/);
  });

  it('writes every target with PASS or FAIL, and a row per sample', () => {
    const md = scaleMarkdown(results);
    expect(md).toContain('| distributed | no lost URL: every reachable page requested | PASS |');
    expect(md).toContain('Per page at the end: PostgreSQL 100 B, bodies stored 9000 B, Redis (keys that do not expire) 50 B');
    expect(md.split('\n').filter((line) => /^\| \d+ \| \d+ \|/.test(line))).toHaveLength(r.samples.length);
  });

  it('keeps an earlier run of the other shape on the same settings, and drops one of other settings', () => {
    const embedded: ShapeRun = { ...r, shape: 'embedded' };
    const earlier: ScaleResults = { ...results, settings: { ...settings, shapes: ['embedded'] }, runs: [embedded], checks: scaleChecks(embedded, LIMITS) };
    const now: ScaleResults = { ...results, settings: { ...settings, shapes: ['distributed'] } };
    const merged = mergeScaleResults(earlier, now);
    expect(merged.dropped).toBeUndefined();
    expect(merged.results.runs.map((x) => x.shape)).toEqual(['embedded', 'distributed']);
    expect(merged.results.settings.shapes).toEqual(['embedded', 'distributed']);
    expect(new Set(merged.results.checks.map((c) => c.shape))).toEqual(new Set(['embedded', 'distributed']));
    // The same shape again replaces its earlier run.
    expect(mergeScaleResults(merged.results, now).results.runs.map((x) => x.shape)).toEqual(['embedded', 'distributed']);
    const other = mergeScaleResults({ ...earlier, settings: { ...earlier.settings, delayMs: 2000 } }, now);
    expect(other.dropped).toMatch(/other settings/);
    expect(other.results.runs.map((x) => x.shape)).toEqual(['distributed']);
  });

  it('draws pages/s, requests/s and RSS against pages fetched as an SVG of its own', () => {
    const svg = scaleChart(results);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<path /g)).toHaveLength(3);
    expect(svg).toContain('requests/s');
    expect(svg).not.toContain('NaN');
  });
});

describe('the dispatch lateness between two scrapes', () => {
  const scrape = (counts: number[]): [number, number][] => [0.01, 0.1, 1, Infinity].map((le, i) => [le, counts[i]]);

  it('is read from the buckets added meanwhile, +Inf included', () => {
    // 100 claims meanwhile: 50 within 10 ms, 40 more within 100 ms, 9 within 1 s, 1 later.
    expect(latenessQuantile(scrape([1000, 2000, 3000, 3001]), scrape([1050, 2090, 3099, 3101]), 0.5)).toBe(10);
    expect(latenessQuantile(scrape([1000, 2000, 3000, 3001]), scrape([1050, 2090, 3099, 3101]), 0.99)).toBe(1000);
    expect(latenessQuantile(scrape([1, 1, 1, 1]), scrape([1, 1, 1, 1]), 0.5)).toBeNull();
  });
});
