import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Browser, chromium, Page } from 'playwright-core';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { RunningService, startService, stopService } from '../support/service-processes';

const TOKEN = 'dashboard-token-8e41f0c2b7d9';

function chromiumPath(): string {
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('the dashboard test needs Chromium: apt-get install chromium (.ci/run does)');
  }
}

/**
 * The dashboard of a control plane that wants its token for everything (as it does by default with a token,
 * listening on every interface), in a real headless Chromium: the page asks once, keeps the token for the
 * tab, sends it as a header (no cookie), and the pause button and the seeds form work with it; hosts an
 * operator set below the politeness floor are listed; nothing the page does is refused by its policy.
 */
describe('dashboard with a control-plane token', () => {
  const prefix = `dashtoken-${randomUUID().slice(0, 8)}`;
  let cp: RunningService;
  let base: string;
  let browser: Browser;
  let page: Page;
  const authorized: string[] = [];
  /** What the page's Content-Security-Policy refused: the console's "Refused to …" lines and securitypolicyviolation events. */
  const policyViolations: string[] = [];
  const api = (method: string, path: string, body?: unknown) =>
    fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>);

  beforeAll(async () => {
    cp = await startService('control-plane', {
      REDIS_URL,
      CRAWLER_PREFIX: prefix,
      CONTROL_PLANE_TOKEN: TOKEN,
      FRONTIER_ALLOW_DELAY_BELOW_MIN: 'true',
    });
    base = `http://127.0.0.1:${cp.port}`;
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('pageerror', (error) => process.stderr.write(`page error: ${error.message}\n`));
    page.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
    });
    // Injected by the browser itself, so the page's policy does not stop it.
    await page.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (e) => console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
    });
    page.on('request', (request) => {
      if (request.headers().authorization === `Bearer ${TOKEN}`) authorized.push(new URL(request.url()).pathname);
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (cp) await stopService(cp);
    await clearPrefix(prefix);
  });

  it('asks for the token once, refuses a wrong one, then shows the crawl', async () => {
    await page.goto(`${base}/`);
    await page.locator('#token-form').waitFor({ state: 'visible', timeout: 10_000 });
    await page.fill('#token-input', 'not-the-token-at-all');
    await page.click('#token-form button');
    await page.locator('#token-note', { hasText: 'refused' }).waitFor({ timeout: 10_000 });
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button');
    await page.locator('#state', { hasText: 'idle' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#token-form').isHidden()).toBe(true);
    expect(authorized).toEqual(expect.arrayContaining(['/status', '/status/history']));
    expect(await page.evaluate('document.cookie')).toBe('');
  });

  it('pauses and submits seeds with it, and keeps it across a reload of the tab', async () => {
    await page.click('#pause-button');
    await page.locator('#state', { hasText: 'paused' }).waitFor({ timeout: 10_000 });
    expect((await api('GET', '/status')).paused).toBe(true);
    await page.reload();
    await page.locator('#state', { hasText: 'paused' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#token-form').isHidden()).toBe(true);
    await page.fill('#seed-urls', 'https://a.example/\nb.example');
    await page.click('#seed-form button[type=submit]');
    await page.locator('#seed-result', { hasText: 'accepted 2 seeds' }).waitFor({ timeout: 10_000 });
    await api('POST', '/resume', {});
  });

  it('lists the hosts an operator set below the politeness floor', async () => {
    expect(await page.locator('#below-floor').isHidden()).toBe(true);
    await api('PATCH', '/hosts/fast.example', { delayMs: 50 });
    await page.locator('#below-floor', { hasText: 'fast.example' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#below-floor tbody').textContent()).toMatch(/fast\.example50 ms2,000 ms/);
  });

  it('ran with nothing refused by its Content-Security-Policy, which allows nothing inline', async () => {
    expect((await fetch(`${base}/`)).headers.get('content-security-policy')).not.toMatch(/unsafe-inline/);
    expect(policyViolations).toEqual([]);
  });
});
