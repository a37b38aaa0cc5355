import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FsContentStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { TestWeb } from '../web/test-web';
import { expectedStoredPages, expectPoliteCompleteCrawl } from './crawl-expectations';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { runCrawlCli } from '../support/run-crawl-cli';
import { QUICK_ROBOTS_GIVE_UP_ENV } from '../support/test-web-cluster';
import { crawlTestWeb, FOLLOW_EVERY_LINK } from '../support/test-web-crawl';

const DELAY_S = 0.1;

afterAll(removeTempDirs);

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The PNG downloader plugin in the embedded crawl (`npm run crawl -- … --plugins png`), against the test
 * web's images: the same web crawled without the plugin first (nothing of it may show), then with it.
 */
describe('embedded crawl with the PNG plugin (--plugins png)', () => {
  let web: TestWeb;
  let plainFetches: Map<string, number>;
  let plain: Record<string, any>;
  let out: string;
  let summary: Record<string, any>;

  const crawl = (dir: string, flags: string[]) =>
    crawlTestWeb(web, dir, { args: [...web.seeds(), ...FOLLOW_EVERY_LINK, ...flags], delaySeconds: DELAY_S, env: QUICK_ROBOTS_GIVE_UP_ENV });

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 30 });
    plain = await crawl(tempDir('crawl-plain-'), []);
    plainFetches = web.requestCountByUrl();
    web.reset();
    out = tempDir('crawl-png-');
    summary = await crawl(out, ['--plugins', 'png']);
  }, 250_000);

  afterAll(() => web?.close());
  const store = () => new FsContentStore(join(out, 'content'));
  const images = () => web.images().filter((i) => !i.url.includes('/private/'));

  it('without the plugin, fetches exactly the plain crawl: no image, and no trace of a plugin', () => {
    expect(plain.complete).toBe(true);
    expect([...plainFetches.keys()].filter((u) => !u.endsWith('/robots.txt')).sort()).toEqual([...web.expected.reachable].sort());
    expect([...plainFetches.keys()].filter((u) => /\.(png|jpe?g)$/.test(u))).toEqual([]);
    expect(Object.keys(plain.totals).filter((k) => k.includes('plugin'))).toEqual([]);
  });

  it('with it, fetches the plain crawl plus the allowed PNGs, each once, politely; never the JPEG nor a disallowed PNG', () => {
    expect(summary.complete).toBe(true);
    const withPng = web.expectedWithPlugins(['png']);
    expectPoliteCompleteCrawl(web, { delayMs: DELAY_S * 1000, expected: withPng });
    const extra = [...web.requestCountByUrl().keys()].filter((u) => !plainFetches.has(u));
    expect(extra.sort()).toEqual(
      images()
        .map((i) => i.url)
        .sort(),
    );
    expect(summary.pagesFetched).toBe(withPng.reachable.size);
    expect(web.requests.filter((r) => /\.jpe?g$/.test(r.path) || r.path === '/private/hidden.png')).toEqual([]);
    expect(Object.keys(summary.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });

  it('stores each distinct valid PNG once, with its dimensions, bit depth, colour type and the page showing it', async () => {
    const content = store();
    const keys = (await collectKeys(content.list('images/'))).filter((k) => k.endsWith('.png'));
    const valid = images().filter((i) => !('corrupt' in i.png));
    const distinct = new Map(valid.map((i) => [sha256(i.body), i]));
    expect(keys.sort()).toEqual([...distinct.keys()].map((h) => `images/${h.slice(0, 2)}/${h}.png`).sort());
    for (const key of keys) {
      const { body, meta } = (await content.get(key))!;
      const copies = valid.filter((i) => i.body.equals(body));
      const fixture = copies[0].png as { width: number; height: number; bitDepth: number; colorType: number };
      expect({ key, width: meta.width, height: meta.height, bitDepth: meta.bitDepth, colorType: meta.colorType }).toEqual({
        key,
        width: String(fixture.width),
        height: String(fixture.height),
        bitDepth: String(fixture.bitDepth),
        colorType: String(fixture.colorType),
      });
      const owner = copies.find((i) => i.url === meta.url);
      expect(owner).toBeDefined();
      expect(owner!.shownOn).toContain(meta.sourcePage);
    }
    expect(summary.totals['plugin.png.stored']).toBe(distinct.size);
    // The logo is served at two URLs: one is stored, the other recorded as its duplicate.
    expect(summary.totals['plugin.png.duplicate']).toBe(valid.length - distinct.size);
    expect(valid.length - distinct.size).toBe(1);
  });

  it('rejects the corrupt PNGs, each with its reason, logged and counted', () => {
    const corrupt = images().filter((i) => 'corrupt' in i.png);
    expect(corrupt.map((i) => (i.png as { corrupt: string }).corrupt).sort()).toEqual(['bad-ihdr-crc', 'truncated']);
    const log = readFileSync(join(out, 'crawl.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    for (const image of corrupt) {
      const { corrupt: reason } = image.png as { corrupt: string };
      expect(summary.totals[`plugin.png.rejected.${reason}`]).toBe(1);
      expect(log.filter((l) => l.event === 'png-rejected' && l.url === image.url)).toEqual([
        expect.objectContaining({ plugin: 'png', reason, detail: expect.any(String) }),
      ]);
    }
  });

  it('leaves the pages as they were: the same pages stored, no staged body left behind', async () => {
    expect(summary.pagesStored).toBe(plain.pagesStored);
    expect(summary.pagesStored).toBe(expectedStoredPages(web) - images().length);
    expect(await collectKeys(store().list('staging/'))).toEqual([]);
  });
});

describe('embedded crawl with an unknown plugin', () => {
  it('stops before crawling, naming it', async () => {
    const outcome = await runCrawlCli(['http://site-000.test/', '--plugins', 'png,nope', '--out', tempDir('crawl-nope-')], {
      env: { ...process.env, REDIS_URL: '', S3_URL: '' },
      timeoutMs: 30_000,
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/PLUGINS: no plugin "nope"/);
  });
});
