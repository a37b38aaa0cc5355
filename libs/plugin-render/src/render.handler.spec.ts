import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ConfigError, loadConfig } from '@crawler/config';
import { PluginFetched, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore, MemoryBodyStaging, SegmentedPageStore } from '@crawler/content-store';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { loadPluginConfig, PluginContext } from '@crawler/plugin-sdk';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { RENDER_CONFIG, RenderConfig } from './render.config';
import { RenderPluginHandler } from './render.handler';
import { renderPlugin } from './render.plugin';
import { BrowserCrashedError } from './browser-pool';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function setup(env: NodeJS.ProcessEnv = {}, crawlerSettings: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-render-'));
  dirs.push(dir);
  const state = new MemoryStateStore();
  const content = new FsContentStore(join(dir, 'content'));
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const staging = new MemoryBodyStaging();
  const sent: { queue: string; payload: any }[] = [];
  const pipeline = { send: async (queue: string, payload: unknown) => void sent.push({ queue, payload }) } as unknown as Pipeline;
  const crawler = loadConfig({}, { 'plugins.enabled': ['render'], dataDir: dir, ...crawlerSettings });
  const config = loadPluginConfig(renderPlugin, { PLUGIN_RENDER_TIMEOUT_MS: '3000', PLUGIN_RENDER_MAX_HEAP_MB: '64', ...env }) as RenderConfig;
  const ctx = new PluginContext(
    'render',
    config,
    crawler,
    state,
    content,
    new SegmentedPageStore(content),
    new Registry(),
    pipeline,
    stats,
    pino({ enabled: false }),
    staging,
  );
  const { frontQueues, backQueues, priorityBias, auditLength, perHostLimit, perIpLimit, perIpIntervalMs } = crawler.frontier;
  const frontier = new MemoryFrontierStore({ frontQueues, backQueues, priorityBias, auditLength, perHostLimit, perIpLimit, perIpIntervalMs });
  const handler = new RenderPluginHandler(ctx, frontier);
  await handler.onModuleInit();
  handlers.push(handler);
  const job = async (path: string, html: string): Promise<{ fetched: PluginFetched; body: Buffer }> => {
    const body = Buffer.from(html);
    const bodyKey = await staging.stage(body);
    const fetched: PluginFetched = {
      v: SCHEMA_VERSION,
      hook: 'fetched',
      fetchId: `f${path.replace(/\W/g, '')}`,
      url: `http://app.test${path}`,
      depth: 0,
      status: 200,
      headers: { 'content-type': 'text/html; charset=windows-1251' },
      contentType: 'text/html; charset=windows-1251',
      bodyKey,
      length: body.length,
      truncated: false,
      fetchedAt: '2026-01-01T00:00:00.000Z',
    };
    return { fetched, body };
  };
  return { handler, sent, staging, stats, state, job };
}
const handlers: RenderPluginHandler[] = [];
afterAll(() => Promise.all(handlers.map((h) => h.onApplicationShutdown())));

describe('RenderPluginHandler (real Chromium)', () => {
  it('hands a page that is not script-built on to the parser as fetched, and renders one that is', async () => {
    // No setting but the plugin itself: detection is what enabling it turns on.
    const { handler, sent, staging, stats, job } = await setup();
    const plain = await job('/plain', '<html><body><a href="/x">x</a><script>1</script></body></html>');
    await handler.onFetched(plain.fetched, plain.body);
    const app = await job('/', '<html><body><div id="app"></div><script>document.getElementById("app").innerHTML = \'<a href="/made">made</a>\'</script></body></html>');
    await handler.onFetched(app.fetched, app.body);

    expect(sent.map((s) => s.queue)).toEqual([QueueName.Parse, QueueName.Parse]);
    const [asFetched, rendered] = sent.map((s) => s.payload);
    const { hook: _h, ...plainPage } = plain.fetched;
    expect(asFetched).toEqual(plainPage);
    expect(rendered).toMatchObject({ url: 'http://app.test/', via: 'render', contentType: 'text/html; charset=utf-8', truncated: false });
    expect(rendered.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(rendered.bodyKey).not.toBe(app.fetched.bodyKey);
    const body = (await staging.read(rendered.bodyKey))!.body;
    expect(body.toString('utf8')).toContain('<a href="/made">made</a>');
    expect(rendered.length).toBe(body.length);
    expect(await stats.totals()).toMatchObject({ 'plugin.render.passed': 1, 'plugin.render.rendered': 1 });
  }, 30_000);

  it("resolves the browser's requests with the crawl's resolver: a name its shared cache holds, that the system cannot resolve", async () => {
    const asked: string[] = [];
    const server = http.createServer((req, res) => {
      asked.push(req.url!);
      if (req.url === '/robots.txt') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('["/found"]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      // This is about names, not pacing or speed: no delay between the host's robots.txt and the script's request
      // (the host's 2 s floor would eat most of a 3 s render), and time enough for a busy machine's Chromium.
      const { handler, sent, staging, state, job } = await setup({ PLUGIN_RENDER_TIMEOUT_MS: '15000' }, { 'dns.allowCidrs': ['127.0.0.1/32'], 'frontier.minDelayMs': 0 });
      // As the DNS resolver service leaves an answer it looked up (DNS_SERVERS, say) for every process of the crawl.
      await state.namespace('dns').set('cached-only.test', JSON.stringify({ address: '127.0.0.1', ttlMs: 60_000, expiresAt: Date.now() + 60_000 }), 60_000);
      const page = await job(
        '/',
        `<html><body><div id="app"></div><script>
          fetch('http://cached-only.test:${port}/links.json').then((r) => r.json()).then((links) => {
            document.getElementById('app').innerHTML = links.map((l) => '<a href="' + l + '">' + l + '</a>').join('');
          });
        </script></body></html>`,
      );
      await handler.onFetched(page.fetched, page.body);
      const rendered = sent[0].payload;
      expect(rendered.via).toBe('render');
      expect((await staging.read(rendered.bodyKey))!.body.toString('utf8')).toContain('<a href="/found">/found</a>');
      expect(asked).toEqual(['/robots.txt', '/links.json']);
    } finally {
      server.close();
    }
  }, 30_000);

  it('renders by URL pattern only, without detection', async () => {
    const { handler, sent, job } = await setup({ PLUGIN_RENDER_URL_PATTERNS: '/app/**', PLUGIN_RENDER_DETECT: 'false' });
    const inside = await job('/app/a/b', '<html><body><p>hi</p><a href="/y">y</a></body></html>');
    const outside = await job('/other', '<html><body><div id="root"></div><script>1</script></body></html>');
    await handler.onFetched(inside.fetched, inside.body);
    await handler.onFetched(outside.fetched, outside.body);
    expect(sent.map((s) => s.payload.via)).toEqual(['render', undefined]);
    expect(renderPlugin.claims instanceof Function && renderPlugin.claims({ detect: false, urlPatterns: ['/app/**'] } as RenderConfig)).toEqual({ pages: ['/app/**'] });
  }, 30_000);

  it('renders every page of a site whose settings say render: true, with neither detection nor patterns', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'plugin-render-sites-')), 'sites.json');
    dirs.push(dirname(file));
    writeFileSync(file, JSON.stringify({ sites: { 'app.test': { render: true } } }));
    const { handler, sent, job } = await setup({ PLUGIN_RENDER_DETECT: 'false' }, { 'sites.file': file });
    const page = await job('/plain', '<html><body><p>hi</p><a href="/y">y</a></body></html>');
    await handler.onFetched(page.fetched, page.body);
    expect(sent.map((s) => s.payload.via)).toEqual(['render']);
  }, 30_000);

  it('throws a crashed render so the queue retries it, then, past PLUGIN_RENDER_CRASH_RETRIES, hands the page on as fetched', async () => {
    const { handler, sent, stats, job } = await setup({ PLUGIN_RENDER_URL_PATTERNS: '/**', PLUGIN_RENDER_CRASH_RETRIES: '1' });
    const hog = await job('/hog', '<html><body><script>const keep = []; for (;;) keep.push(new Array(1 << 20).fill(Math.random()));</script></body></html>');
    await expect(handler.onFetched(hog.fetched, hog.body)).rejects.toBeInstanceOf(BrowserCrashedError);
    expect(sent).toEqual([]);
    await handler.onFetched(hog.fetched, hog.body);
    expect(sent.map((s) => [s.queue, s.payload.bodyKey, s.payload.via])).toEqual([[QueueName.Parse, hog.fetched.bodyKey, undefined]]);
    expect(await stats.totals()).toMatchObject({ 'plugin.render.crashed': 2, 'plugin.render.crash-gave-up': 1 });
  }, 30_000);

  it('hands a page whose rendered DOM is larger than DOWNLOADER_MAX_BODY_BYTES on as fetched', async () => {
    const { handler, sent, stats, job } = await setup({ PLUGIN_RENDER_URL_PATTERNS: '/**' }, { 'downloader.maxBodyBytes': 64 * 1024 });
    const big = await job('/big', '<html><body><div id="app"></div><script>document.getElementById("app").textContent = "x".repeat(200000)</script></body></html>');
    await handler.onFetched(big.fetched, big.body);
    expect(sent.map((s) => [s.payload.bodyKey, s.payload.via])).toEqual([[big.fetched.bodyKey, undefined]]);
    expect(await stats.totals()).toMatchObject({ 'plugin.render.too-large': 1 });
  }, 30_000);

  it('hands a page cut at the time limit on as fetched', async () => {
    const { handler, sent, stats, job } = await setup({ PLUGIN_RENDER_URL_PATTERNS: '/**', PLUGIN_RENDER_TIMEOUT_MS: '1000' });
    const loop = await job('/loop', '<html><body><script>for (;;) {}</script></body></html>');
    await handler.onFetched(loop.fetched, loop.body);
    expect(sent.map((s) => [s.payload.bodyKey, s.payload.via])).toEqual([[loop.fetched.bodyKey, undefined]]);
    expect((await stats.totals())['plugin.render.timeout']).toBe(1);
  }, 30_000);
});

describe('render settings', () => {
  it('stops at boot, naming PLUGIN_RENDER_CHROMIUM_PATH, when no Chromium is found or the path is no executable', () => {
    expect(() => loadPluginConfig(renderPlugin, { PLUGIN_RENDER_CHROMIUM_PATH: '/nonexistent/chromium' })).toThrow(ConfigError);
    expect(() => loadPluginConfig(renderPlugin, { PLUGIN_RENDER_CHROMIUM_PATH: '/nonexistent/chromium' })).toThrow(
      /PLUGIN_RENDER_CHROMIUM_PATH: \/nonexistent\/chromium is not an executable/,
    );
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(() => loadPluginConfig(renderPlugin, {})).toThrow(/PLUGIN_RENDER_CHROMIUM_PATH: no Chromium found: none of chromium, chromium-browser/);
    } finally {
      process.env.PATH = path;
    }
  });

  it('enabled with no setting, claims every HTML page and renders those that look script-built', () => {
    const config = loadPluginConfig(renderPlugin, {}) as RenderConfig;
    expect(config.detect).toBe(true);
    expect(renderPlugin.claims instanceof Function && renderPlugin.claims(config)).toEqual({ pages: ['/**'] });
  });

  it('refuses bad values, named', () => {
    expect(() => loadPluginConfig(renderPlugin, { PLUGIN_RENDER_CONTEXTS: '0' })).toThrow(/PLUGIN_RENDER_CONTEXTS/);
    expect(() => loadPluginConfig(renderPlugin, { PLUGIN_RENDER_URL_PATTERNS: 'app/*' })).toThrow(/PLUGIN_RENDER_URL_PATTERNS/);
    expect(() => loadPluginConfig(renderPlugin, { PLUGIN_RENDER_DETECT: 'maybe' })).toThrow(/PLUGIN_RENDER_DETECT/);
  });

  it('documents every setting in docs/configuration.md', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/configuration.md'), 'utf8');
    expect(Object.keys(RENDER_CONFIG.env).filter((name) => !doc.includes(`| \`${name}\` |`))).toEqual([]);
  });
});
