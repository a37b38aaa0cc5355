import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScaleResults } from '../../bench/scale/scale-report';

/**
 * `npm run bench:scale` (a million pages in each shape) reduced to a test: the same command, built, on a web of
 * SCALE_PAGES pages over a few hundred hosts (most behind the four shared addresses), sampled every two
 * seconds, in both shapes. It holds the invariants the web counts (nothing lost, nothing fetched twice,
 * robots.txt and politeness kept) and that the results are written with their samples; pace, memory growth
 * and Redis bytes per page mean something only at scale, and are left to the benchmark.
 */
const PAGES = Number(process.env.SCALE_REDUCED_PAGES || 6000);
const HOSTS = 300;
const TIMEOUT_MS = 10 * 60_000;
/** The invariants, by the start of their check's name (bench/scale/scale-checks.ts). */
const INVARIANTS = ['complete', 'no lost URL', 'no repeat fetch', 'robots.txt obeyed', 'politeness per host', 'politeness per address'];

describe('bench:scale, reduced (both shapes)', () => {
  const out = mkdtempSync(join(tmpdir(), 'scale-reduced-'));
  let results: ScaleResults;
  let log = '';

  beforeAll(async () => {
    const child = spawn(process.execPath, [join(__dirname, '../../dist/bench/scale.js')], {
      env: {
        ...process.env,
        SCALE_PAGES: String(PAGES),
        SCALE_HOSTS: String(HOSTS),
        SCALE_SAMPLE_MS: '2000',
        SCALE_DELAY_MS: '100',
        SCALE_CRAWL_DELAY_HOSTS: '1',
        SCALE_LATENCY_MS: '2',
        SCALE_PAGE_KB: '8',
        SCALE_TIMEOUT_S: String(TIMEOUT_MS / 2000),
        // The shared addresses' per-IP rule would make this a test of that rule's pace: the test keeps the limit, not the interval.
        SCALE_ENV: 'FRONTIER_PER_IP_INTERVAL_MS=0',
        SCALE_OUT: out,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (log += chunk));
    child.stderr!.on('data', (chunk) => (log += chunk));
    await new Promise((resolve) => child.once('exit', resolve));
    console.log(
      log
        .split('\n')
        .filter((line) => /^(PASS|FAIL)|targets met/.test(line))
        .join('\n'),
    );
    results = JSON.parse(readFileSync(join(out, 'scale.json'), 'utf8'));
  }, TIMEOUT_MS + 60_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('writes scale.json, scale.md and scale.svg, with samples of every process of both shapes', () => {
    for (const file of ['scale.json', 'scale.md', 'scale.svg']) expect(existsSync(join(out, file))).toBe(true);
    expect(results.runs.map((r) => r.shape)).toEqual(['embedded', 'distributed']);
    for (const run of results.runs) {
      expect(run.samples.length).toBeGreaterThanOrEqual(3);
      const last = run.samples[run.samples.length - 1];
      expect(last.pagesFetched).toBe(run.web.reachablePages);
      expect(Object.values(run.samples[1].processes).every((p) => p.rssBytes > 0)).toBe(true);
      // Each sample was also written down as it was taken, for a run cut short.
      const journal = readFileSync(join(out, `scale-${run.shape}.samples.jsonl`), 'utf8')
        .trim()
        .split('\n');
      expect(journal.map((line) => JSON.parse(line).pagesFetched)).toEqual(run.samples.map((s) => s.pagesFetched));
    }
    const distributed = results.runs[1];
    expect(Object.keys(distributed.samples[0].processes).length).toBeGreaterThanOrEqual(9);
    expect(distributed.samples.some((s) => s.redis.length === 3 && s.postgresBytes! > 0 && s.storeBytes! > 0)).toBe(true);
    expect(distributed.samples.some((s) => s.controlPlane && Object.values(s.controlPlane).every((ms) => ms !== null))).toBe(true);
    expect(distributed.samples.some((s) => s.dispatchP99Ms !== null)).toBe(true);
    expect(distributed.samples.some((s) => Object.values(s.processes).some((p) => p.heapUsedBytes !== null && p.eventLoopP99Ms !== null))).toBe(true);
  });

  it.each(INVARIANTS)('holds in both shapes: %s', (invariant) => {
    const checks = results.checks.filter((c) => c.name.startsWith(invariant));
    expect(checks.map((c) => c.shape)).toEqual(['embedded', 'distributed']);
    for (const c of checks) expect(`${c.shape}: ${c.name}: ${c.pass ? 'PASS' : 'FAIL'} (${c.detail})`).toMatch(/: PASS \(/);
  });
});

describe('bench:scale, stopped with Ctrl-C', () => {
  const out = mkdtempSync(join(tmpdir(), 'scale-interrupted-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('writes where the crawl got to (the web’s counts, the pages not yet asked for) to scale-interrupted.json, and no scale.json', async () => {
    const child = spawn(process.execPath, [join(__dirname, '../../dist/bench/scale.js')], {
      env: {
        ...process.env,
        SCALE_SHAPES: 'embedded',
        SCALE_PAGES: '40000',
        SCALE_HOSTS: '200',
        SCALE_SAMPLE_MS: '1000',
        SCALE_DELAY_MS: '100',
        SCALE_LATENCY_MS: '2',
        SCALE_PAGE_KB: '8',
        SCALE_ENV: 'FRONTIER_PER_IP_INTERVAL_MS=0',
        SCALE_OUT: out,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        log += chunk;
        // Stopped once it has fetched something: a sample with pages in it.
        if (/^\d+ s: [1-9]\d* pages/m.test(log)) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then(() => resolve());
    });
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(existsSync(join(out, 'scale.json'))).toBe(false);
    const where: ScaleResults = JSON.parse(readFileSync(join(out, 'scale-interrupted.json'), 'utf8'));
    const [run] = where.runs;
    expect(run.notes).toContain('interrupted');
    expect(run.web.pagesFetched).toBeGreaterThan(0);
    expect(run.web.pagesFetched).toBeLessThan(run.web.reachablePages);
    expect(run.lost.count).toBe(run.web.reachablePages - run.web.pagesFetched);
    expect(where.checks.length).toBeGreaterThan(0);
  }, 120_000);
});
