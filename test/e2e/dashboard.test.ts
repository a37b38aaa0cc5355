import { execFile } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Browser, chromium, Page } from 'playwright-core';
import { TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { TestWebCluster } from '../support/test-web-cluster';
import { expectPoliteCompleteCrawl } from './crawl-expectations';

const run = promisify(execFile);
/** Slow enough that the crawl is still running when the pause tests come (about a minute in all). */
const DELAY_MS = 400;
const ROOT = join(__dirname, '../..');
const CLI = join(ROOT, 'dist/apps/crawl/src/cluster-cli.js');
/**
 * The screenshot docs/control-plane.md shows. Tests write only to temp dirs; to refresh the tracked image,
 * run this test with DASHBOARD_SCREENSHOT_TO_DOCS=1 and commit the file.
 */
const DOCS_SCREENSHOT = join(ROOT, 'docs/images/dashboard.png');
const refreshDocsScreenshot = process.env.DASHBOARD_SCREENSHOT_TO_DOCS === '1';

function chromiumPath(): string {
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('the dashboard test needs Chromium: apt-get install chromium (.ci/run does)');
  }
}

/**
 * The control plane as its users see it: every service its own process on Redis and S3 crawling the local
 * test web, the dashboard in a real headless Chromium, the CLI against the same cluster. Seeds go in through
 * the dashboard's form; the counts on the diagram, the chart, top hosts and errors fill in as the crawl runs;
 * a pause from the dashboard stops every request until it is lifted (by the CLI), and the crawl, paused
 * twice, still ends with every reachable page fetched exactly once, politely.
 */
describe('dashboard and CLI against a running cluster', () => {
  let web: TestWeb;
  let cluster: TestWebCluster;
  let browser: Browser;
  let page: Page;
  const foreignRequests: string[] = [];
  const pageErrors: string[] = [];
  /** What the page's Content-Security-Policy refused: the console's "Refused to …" lines and securitypolicyviolation events. */
  const policyViolations: string[] = [];
  const shots = tempDir('dashboard-');

  const cli = (...args: string[]) => run(process.execPath, [CLI, ...args, '--control', cluster.control], { encoding: 'utf8', timeout: 60_000 });
  const number = async (selector: string) => Number((await page.locator(selector).textContent())!.replace(/[^0-9.]/g, ''));
  const waitFor = async (check: () => Promise<boolean>, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 60, pagesPerHost: 8 });
    cluster = await new TestWebCluster(web).start({ env: { FRONTIER_MIN_DELAY_MS: String(DELAY_MS) } });
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.on('request', (request) => {
      if (!request.url().startsWith(cluster.control)) foreignRequests.push(request.url());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
    });
    // Injected by the browser itself, so the page's policy does not stop it.
    await page.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (e) => console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await cluster?.close();
    await web?.close();
    removeTempDirs();
  });

  it("no service says what it runs on (no X-Powered-By), the control plane's pages and API included", async () => {
    const answers = await Promise.all(
      [...cluster.services.map((s) => `http://127.0.0.1:${s.port}/health/live`), `${cluster.control}/`, `${cluster.control}/status`].map(async (url) => {
        const response = await fetch(url);
        await response.arrayBuffer();
        return { url, status: response.status, poweredBy: response.headers.get('x-powered-by') };
      }),
    );
    expect(answers.length).toBeGreaterThanOrEqual(10);
    for (const answer of answers) expect(answer).toEqual({ ...answer, status: 200, poweredBy: null });
  }, 30_000);

  it('shows the pipeline diagram with every box and queue, idle before any seed', async () => {
    await page.goto(`${cluster.control}/`);
    await expect(page.title()).resolves.toMatch(/control plane/);
    for (const box of ['URL Filter', 'URL Seen?', 'URL Frontier', 'DNS Resolver', 'Downloader', 'Content Parser', 'Content Seen?', 'URL Extractor', 'Content Storage']) {
      await page.locator('#pipeline .box .label', { hasText: box }).first().waitFor();
    }
    for (const queue of ['seen-urls', 'frontier-add', 'dns-resolve', 'fetch', 'parse', 'content-seen', 'extract-links', 'filter-urls', 'frontier-done']) {
      expect(await page.locator(`#arrow-${queue} path`).count()).toBe(1);
    }
    await page.locator('#state', { hasText: 'idle' }).waitFor({ timeout: 10_000 });
    expect(await number('#total-fetched')).toBe(0);
    expect(await page.locator('#box-downloader .total').textContent()).toBe('0 pages');
  }, 30_000);

  it('takes seeds from its form, then the counts rise on the boxes, the chart and the tables', async () => {
    await page.fill('#seed-urls', web.seeds()[0]);
    await page.click('#seed-form button[type=submit]');
    await page.locator('#seed-result', { hasText: 'accepted 1 seed' }).waitFor({ timeout: 10_000 });
    await page.locator('#state', { hasText: 'crawling' }).waitFor({ timeout: 10_000 });

    await waitFor(async () => (await number('#total-fetched')) >= 5, 60_000, 'the first pages on the dashboard');
    const early = await number('#total-fetched');
    await waitFor(async () => (await number('#total-fetched')) >= early + 20, 60_000, 'the fetched count to rise');

    // The downloader box counts pages and a rate; the queues on the arrows show numbers.
    expect(await page.locator('#box-downloader .total').textContent()).toMatch(/^[\d,]+ pages$/);
    await waitFor(async () => /^[1-9][\d.,]* pages\/s$/.test((await page.locator('#box-downloader .rate').textContent()) ?? ''), 20_000, 'a fetch rate');
    for (const queue of ['dns-resolve', 'fetch', 'parse']) expect(await page.locator(`#arrow-${queue} .depth`).getAttribute('data-depth')).toMatch(/^\d+$/);
    expect(await page.locator('#box-frontier .total').textContent()).toMatch(/URLs · [\d,]+ out$/);

    // Throughput over time: the fetched line has points (one per 2 s sample), some above the axis.
    await waitFor(async () => Number(await page.locator('#chart polyline[data-series=fetched]').getAttribute('data-count')) >= 6, 30_000, 'chart samples');
    const points = ((await page.locator('#chart polyline[data-series=fetched]').getAttribute('points')) ?? '').split(' ').map((p) => Number(p.split(',')[1]));
    expect(Math.min(...points)).toBeLessThan(170); // y of 0/s is 178

    // Top hosts are hosts of the test web; the recent errors fill in from its failing pages.
    await waitFor(async () => (await page.locator('#top-hosts tbody tr').count()) > 0, 20_000, 'top hosts');
    expect(await page.locator('#top-hosts tbody tr td').first().textContent()).toMatch(new RegExp(`^site-\\d+\\.test:${web.port}$`));

    const shot = join(shots, 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(20_000);
    if (refreshDocsScreenshot) {
      mkdirSync(dirname(DOCS_SCREENSHOT), { recursive: true });
      copyFileSync(shot, DOCS_SCREENSHOT);
    }
  }, 150_000);

  it('pauses from the dashboard: in-flight requests finish, then nothing reaches any site until resumed', async () => {
    await page.click('#pause-button');
    await page.locator('#state', { hasText: /^paused$/ }).waitFor({ timeout: 30_000 });
    const drainedAt = Date.now();
    const status = await cluster.status();
    expect(status).toMatchObject({ paused: true, drained: true, inFlight: 0, complete: false });
    expect(status.frontier).toBeGreaterThan(0); // work is waiting, not lost
    expect(await page.locator('#pause-button').textContent()).toBe('Resume');

    // The totals are each process's counts, added up every STATS_FLUSH_MS: read them once settled.
    await new Promise((r) => setTimeout(r, 500));
    const fetchedWhenDrained = (await cluster.status()).totals.fetched;
    await new Promise((r) => setTimeout(r, 2500));
    expect(web.requests.filter((r) => r.at > drainedAt)).toEqual([]);
    expect((await cluster.status()).totals.fetched).toBe(fetchedWhenDrained);
    const { stdout } = await cli('status');
    expect(stdout).toMatch(/^state\s+paused/m);
    expect(stdout).toMatch(/^Downloader\s+fetch\s+\d+/m);

    // Resumed from the command line: the crawl picks up where it was.
    await cli('resume');
    await page.locator('#pause-button', { hasText: 'Pause' }).waitFor({ timeout: 10_000 });
    await waitFor(async () => (await cluster.status()).totals.fetched > status.totals.fetched, 20_000, 'fetching to resume');
  }, 90_000);

  it('pauses from the CLI (--wait returns once nothing is in flight) and resumes', async () => {
    expect((await cluster.status()).complete).toBe(false);
    const paused = await cli('pause', '--wait', '--reason', 'maintenance');
    expect(paused.stderr).toMatch(/paused since/);
    expect(paused.stderr).toMatch(/drained: nothing in flight/);
    const status = await cluster.status();
    expect(status).toMatchObject({ paused: true, drained: true, pause: { reason: 'maintenance' } });
    await page.locator('#pause-note', { hasText: 'maintenance' }).waitFor({ timeout: 10_000 });
    await cli('resume');
    expect((await cluster.status()).paused).toBe(false);
  }, 90_000);

  it('runs to the end, every reachable page fetched exactly once, politely, for all the pausing', async () => {
    await page.locator('#state', { hasText: 'complete' }).waitFor({ timeout: 150_000 });
    const status = await cluster.status();
    expect(status.complete).toBe(true);
    expect(status.totals.fetched).toBe(web.expected.reachable.size);
    expectPoliteCompleteCrawl(web, { delayMs: DELAY_MS });
    expect(await number('#total-fetched')).toBe(web.expected.reachable.size);
    // The test web's failing pages (500, 404) show as recent errors.
    expect(await page.locator('#recent-errors tbody tr').count()).toBeGreaterThan(0);
    expect(await page.locator('#recent-errors tbody').textContent()).toMatch(/http (404|500)/);
    // Its hosts whose robots.txt answers 500 were given up while it ran, each named with why.
    const aside = page.locator('#hosts-aside');
    expect(await aside.isVisible()).toBe(true);
    for (const host of web.roles.robotsError) {
      await aside
        .locator('tr', { hasText: `${host}:` })
        .filter({ hasText: 'set aside: robots-unreachable' })
        .filter({ hasText: 'last answered 500' })
        .waitFor({ timeout: 10_000 });
    }
  }, 180_000);

  it("looks up a URL's record and its stored content", async () => {
    const seed = web.seeds()[0];
    await page.fill('#lookup-url', seed);
    await page.click('#lookup-form button[type=submit]');
    await page.locator('#lookup-result', { hasText: '"state": "stored"' }).waitFor({ timeout: 10_000 });
    const href = await page.locator('#lookup-content').getAttribute('href');
    const response = await fetch(new URL(href!, `${cluster.control}/`));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(web.replyBody(seed).toString('utf8'));
  }, 30_000);

  it('`seed --wait` follows a crawl to its end and prints the final status', async () => {
    // The seed was crawled already: URL-seen drops it and the crawl is complete again at once.
    const { stdout, stderr } = await cli('seed', '--wait', web.seeds()[0]);
    expect(stderr).toMatch(/submitted 1 seed/);
    expect(stderr).toMatch(/crawl complete/);
    expect(JSON.parse(stdout)).toMatchObject({ complete: true, paused: false });
  }, 60_000);

  it('loaded nothing but the control plane, and ran without script errors or anything its policy refused', () => {
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(policyViolations).toEqual([]);
    expect(existsSync(DOCS_SCREENSHOT)).toBe(true);
  });
});
