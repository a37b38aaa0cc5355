import { existsSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { decodeHtml, parseHtmlPage } from '@crawler/html';
import { TestWeb } from '../web/test-web';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { QUICK_ROBOTS_GIVE_UP_ENV } from '../support/test-web-cluster';
import { crawlTestWeb, FOLLOW_EVERY_LINK } from '../support/test-web-crawl';

const DELAY_S = 0.1;

/** What the monitor watches for: a word of the windows-1251 page, a filler word of many pages, a pattern. */
const TERMS = ['съешь', 'Heartbeat'];
const PATTERNS = ['shard\\s+partition'];

afterAll(removeTempDirs);

/**
 * The expected alerts, computed from the test web itself with the rule of docs/configuration.md, written
 * here independently of the plugin's matcher: a term matches case-insensitively where no letter, digit or
 * `_` (of any script) touches it; a pattern as a regex with flags `iu`. Searched: the page's title and text.
 */
function termsOn(body: Buffer): string[] {
  const page = parseHtmlPage(decodeHtml(body).text, { maxLinks: 0 });
  const text = `${page.title ?? ''} ${page.text}`.replace(/\s+/g, ' ');
  const lower = text.toLowerCase();
  const word = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);
  const found = TERMS.filter((term) => {
    const t = term.toLowerCase();
    for (let i = lower.indexOf(t); i >= 0; i = lower.indexOf(t, i + 1)) {
      if (!word(lower[i - 1]) && !word(lower[i + t.length])) return true;
    }
    return false;
  });
  return [...found, ...PATTERNS.filter((p) => new RegExp(p, 'iu').test(text))];
}

/** A webhook on 127.0.0.1 recording every POSTed alert. */
async function startWebhook(): Promise<{ server: Server; url: string; calls: any[] }> {
  const calls: any[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    calls.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, calls, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts` };
}

describe('embedded crawl with the web monitor (--plugins monitor)', () => {
  let web: TestWeb;
  let webhook: Awaited<ReturnType<typeof startWebhook>>;
  let plain: Record<string, any>;
  let plainOut: string;
  let plainFetches: string[];
  let plainWebhookCalls: number;
  let summary: Record<string, any>;
  let out: string;
  let fetches: string[];

  const crawl = (dir: string, flags: string[]) =>
    crawlTestWeb(web, dir, {
      args: [...web.seeds(), ...FOLLOW_EVERY_LINK, ...flags],
      delaySeconds: DELAY_S,
      env: {
        ...QUICK_ROBOTS_GIVE_UP_ENV,
        // Set in both crawls: without --plugins monitor they must change nothing.
        PLUGIN_MONITOR_TERMS: TERMS.join(','),
        PLUGIN_MONITOR_PATTERNS: JSON.stringify(PATTERNS),
        PLUGIN_MONITOR_WEBHOOK_URL: webhook.url,
      },
    });
  const fetched = () => [...web.requestCountByUrl().keys()].filter((u) => !u.endsWith('/robots.txt')).sort();

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 30 });
    webhook = await startWebhook();
    plainOut = tempDir('crawl-plain-');
    plain = await crawl(plainOut, []);
    plainFetches = fetched();
    plainWebhookCalls = webhook.calls.length;
    web.reset();
    out = tempDir('crawl-monitor-');
    summary = await crawl(out, ['--plugins', 'monitor']);
    fetches = fetched();
  }, 250_000);

  afterAll(async () => {
    await web?.close();
    await new Promise((resolve) => webhook?.server.close(resolve));
  });

  /** (url, term) of every alert a correct monitor raises; a group of identical pages counts as one page. */
  const expected = () => {
    const ok = new Set(
      web.requests
        .filter((r) => r.status === 200 && r.path !== '/robots.txt')
        .map((r) => new URL(r.path, web.origin(r.host)).href)
        .filter((url) => !web.expected.sitemaps.has(url)),
    );
    const pairs: string[] = [];
    for (const url of ok) for (const term of termsOn(web.replyBody(url))) pairs.push(`${groupOf(url)} ${term}`);
    return [...new Set(pairs)].sort(); // a group of identical pages: its one page kept alerts once
  };
  const groupOf = (url: string) => {
    const i = web.expected.duplicates.findIndex((group) => group.includes(url));
    return i < 0 ? url : `duplicates#${i}`;
  };
  const jsonl = () =>
    readFileSync(join(out, 'plugin-monitor', 'alerts.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));

  it('without the plugin, raises nothing: no alert file, no webhook call, no plugin total', () => {
    expect(plain.complete).toBe(true);
    expect(plainFetches).toEqual([...web.expected.reachable].sort());
    expect(existsSync(join(plainOut, 'plugin-monitor'))).toBe(false);
    expect(plainWebhookCalls).toBe(0);
    expect(Object.keys(plain.totals).filter((k) => k.includes('plugin'))).toEqual([]);
  });

  it('with it, fetches exactly what the plain crawl fetched (a page hook fetches nothing)', () => {
    expect(summary.complete).toBe(true);
    expect(fetches).toEqual(plainFetches);
    expect(summary.pagesStored).toBe(plain.pagesStored);
    expect(Object.keys(summary.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });

  it('the expected alerts are worth testing: the windows-1251 page, the pattern, many pages, no duplicate group', () => {
    const pairs = expected();
    expect(pairs).toContain(`${web.expected.charsetPage.url} съешь`);
    expect(pairs.filter((p) => p.endsWith(' Heartbeat')).length).toBeGreaterThan(3);
    expect(pairs.filter((p) => p.endsWith(` ${PATTERNS[0]}`)).length).toBeGreaterThan(0);
  });

  it('raises exactly the expected alerts, each once: the JSONL lines and the webhook calls', () => {
    const lines = jsonl();
    const asPairs = (alerts: any[]) => alerts.map((a) => `${groupOf(a.url)} ${a.term}`).sort();
    expect(asPairs(lines)).toEqual(expected());
    expect(asPairs(webhook.calls)).toEqual(expected());
    expect(new Set(lines.map((l) => l.id)).size).toBe(lines.length);
    expect([...webhook.calls].sort((a, b) => a.id.localeCompare(b.id))).toEqual([...lines].sort((a, b) => a.id.localeCompare(b.id)));
    // Of a group of identical pages, only the one the crawl kept alerts.
    for (const group of web.expected.duplicates) expect(new Set(lines.filter((l) => group.includes(l.url)).map((l) => l.url)).size).toBeLessThanOrEqual(1);
    expect(summary.totals['plugin.monitor.alerts']).toBe(lines.length);
  });

  it('gives each alert its snippet around the match, and the page title', () => {
    const russian = jsonl().find((l) => l.term === 'съешь')!;
    expect(russian.url).toBe(web.expected.charsetPage.url);
    expect(russian.matched).toBe('Съешь');
    expect(russian.snippet).toContain(web.expected.charsetPage.text.slice(0, 40));
    for (const line of jsonl()) {
      expect(line.snippet.toLowerCase()).toContain(line.matched.toLowerCase().replace(/\s+/g, ' '));
      expect(line.snippet.length).toBeLessThanOrEqual(2 * 60 + line.matched.length + 2);
      expect(line.contentHash).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});
