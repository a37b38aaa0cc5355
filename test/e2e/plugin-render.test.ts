import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FsContentStore } from '@crawler/content-store';
import { TestWeb } from '../web/test-web';
import { storedPages } from '../support/stored-pages';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb } from '../support/test-web-crawl';

const run = promisify(execFile);

afterAll(removeTempDirs);

/**
 * Only the plugin is named (`--plugins render`): detection of script-built pages is what that turns on.
 * The page's script fetches its links after the load event, through the plugin's gate (robots.txt first): the
 * DOM is read once the network is idle, or after the settle time. On a loaded CI machine that chain once took
 * longer than the default 2 s and the DOM was read without the links; idle comes as soon as it is done, so a
 * longer bound costs nothing when it is not needed.
 */
const RENDER_ENV = { PLUGIN_RENDER_SETTLE_MS: '10000' };

/**
 * The rendering plugin in the embedded crawl (`--plugins render`), on the test web's script-built host
 * `app-0.test`: its home page has no link until its script has fetched `/links.json` and written them.
 * Crawled from that home page without the plugin, then with it (real Chromium).
 */
describe('embedded crawl with the render plugin (--plugins render)', () => {
  let web: TestWeb;
  let plain: Record<string, any>;
  let plainPaths: string[];
  let rendered: Record<string, any>;
  let renderedPaths: string[];
  let out: string;
  let both: Record<string, any>;
  let bothPaths: string[];

  const crawl = (dir: string, flags: string[], env: Record<string, string> = {}) =>
    crawlTestWeb(web, dir, { args: [web.expected.scripted[0], '--scope', 'any', '--max-depth', '10', ...flags], delaySeconds: 0.05, env });
  // The crawl's probe for a sitemap (/sitemap.xml, a 404 here) is no page: left out.
  const paths = () => web.requests.filter((r) => r.host === 'app-0.test' && r.path !== '/sitemap.xml').map((r) => r.path);

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, scripted: true });
    plain = await crawl(tempDir('crawl-plain-'), []);
    plainPaths = paths();
    web.reset();
    out = tempDir('crawl-render-');
    rendered = await crawl(out, ['--plugins', 'render'], RENDER_ENV);
    renderedPaths = paths();
    web.reset();
    // Both plugins at once: the focused crawl judges the pages the rendered DOM led to. The topic's term is on
    // the pages behind the script-written links, not on the home page, rendered or not.
    both = await crawl(tempDir('crawl-render-focus-'), ['--plugins', 'render,focus'], { ...RENDER_ENV, PLUGIN_FOCUS_TERMS: 'script-built' });
    bothPaths = paths();
  }, 300_000);

  afterAll(() => web?.close());

  it('without the plugin, finds only the home page: its links exist only once its script has run', () => {
    expect(plain.complete).toBe(true);
    expect(plainPaths.sort()).toEqual(['/', '/robots.txt']);
    expect(Object.keys(plain.totals).filter((k) => k.includes('plugin'))).toEqual([]);
  });

  it('with it, renders the home page and finds every page its script links to, each fetched once', () => {
    expect(rendered.complete).toBe(true);
    const pages = web.expected.scripted.map((u) => new URL(u).pathname);
    // The pages, and the sub-requests of the render: the bundle and its JSON. robots.txt once: the render's
    // sub-requests obey the copy the downloader fetched and cached for the crawl.
    expect(renderedPaths.sort()).toEqual([...pages, '/robots.txt', '/app.js', '/links.json'].sort());
    expect(rendered.pagesStored).toBe(pages.length);
    expect(rendered.totals['plugin.render.rendered']).toBe(1);
    // The other pages have links of their own: not script-built, they go on to the parser as fetched.
    expect(rendered.totals['plugin.render.passed']).toBe(pages.length - 1);
  });

  it('refuses the script’s request to the cloud metadata address, though the crawl allows private addresses', () => {
    expect(rendered.totals['plugin.render.refused.address']).toBe(1);
  });

  it('with the focus plugin too (--plugins render,focus), renders the same pages and judges every one of them', () => {
    expect(both.complete).toBe(true);
    expect(bothPaths.sort()).toEqual(renderedPaths.sort());
    expect(both.pagesStored).toBe(rendered.pagesStored);
    expect(both.totals['plugin.render.rendered']).toBe(1);
    expect(both.totals['plugin.focus.judged']).toBe(both.pagesStored);
    // /p/1 … /p/3 say "Script-built site"; the home page, rendered, holds only their links.
    expect(both.totals['plugin.focus.relevant']).toBe(web.expected.scripted.length - 1);
  });

  it('stores the rendered DOM of the home page, and records that it was rendered', async () => {
    const stored = await storedPages(new FsContentStore(join(out, 'content')));
    const home = stored.get(web.expected.scripted[0])!;
    expect(home.meta).toMatchObject({ via: 'render', contentType: 'text/html; charset=utf-8' });
    for (const url of web.expected.scripted.slice(1)) expect(stored.get(url)?.meta.via).toBeUndefined();
  });
});

/**
 * One schedule per host for the downloader and the render's browser: the home page of `app-0.test` is fetched
 * by the downloader, its `/app.js` and `/links.json` by the render's gate, then `/p/1` … `/p/3` (links the
 * script wrote) by the downloader again. The site sees every request, whoever made it, the crawl's delay
 * after the end of the one before, and never two at once.
 */
describe('embedded crawl with the render plugin: downloader and sub-requests keep one schedule per host', () => {
  const DELAY_MS = 2000;
  let web: TestWeb;
  let summary: Record<string, any>;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 12, scripted: true });
    summary = await crawlTestWeb(web, tempDir('crawl-render-schedule-'), {
      args: [web.expected.scripted[0], '--scope', 'any', '--max-depth', '10', '--plugins', 'render'],
      delaySeconds: DELAY_MS / 1000,
      // The render's two sub-requests wait the delay each: well within the time limit, and settled after them.
      env: { ...RENDER_ENV, PLUGIN_RENDER_TIMEOUT_MS: '60000' },
    });
  }, 300_000);

  afterAll(() => web?.close());

  it('spaces every request to the host by the delay after the previous one ended, and has one in flight at most', () => {
    expect(summary.complete).toBe(true);
    expect(summary.totals['plugin.render.rendered']).toBe(1);
    const paths = web.requests.filter((r) => r.host === 'app-0.test').map((r) => r.path);
    // Both kinds of request reached the host: the downloader's pages and the browser's sub-requests.
    expect(paths).toEqual(expect.arrayContaining(['/', '/app.js', '/links.json', '/p/1', '/p/2', '/p/3']));
    expect(web.maxConcurrentByHost().get('app-0.test')).toBe(1);
    // A few ms of slack for the server's and the crawler's clocks reading the same moment apart.
    expect(web.minGapAfterResponseByHost().get('app-0.test')).toBeGreaterThanOrEqual(DELAY_MS - 20);
  });
});

describe('the plugin-render service without a Chromium', () => {
  it('stops at boot with exit code 2, naming the setting', async () => {
    const main = join(__dirname, '../../dist/apps/plugin-render/src/main.js');
    const failed = await run(process.execPath, [main], {
      env: { ...process.env, REDIS_URL: '', S3_URL: '', PLUGINS: 'render', PLUGIN_RENDER_CHROMIUM_PATH: '/nonexistent/chromium' },
      timeout: 30_000,
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toMatch(/plugin-render: [\s\S]*PLUGIN_RENDER_CHROMIUM_PATH: \/nonexistent\/chromium is not an executable file/);
  });
});
