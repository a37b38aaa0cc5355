import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { IncomingMessage, ServerResponse } from 'node:http';
import net, { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { FetchRequest, PluginManifest, pluginQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore, MemoryBodyStaging } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { FetchLog, FetchLogEntry } from '@crawler/logging';
import { PluginRegistry } from '@crawler/plugin-host';
import { noPlugins } from '@crawler/plugin-host/testing';
import { SiteSettingsService } from '@crawler/crawl-state';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { SiteRule, siteRule } from '@crawler/site-settings';
import { FileRecordsStore } from '@crawler/records';
import { MemoryStateStore } from '@crawler/state';
import { pairingProblems, readWarcFile } from '@crawler/warc/testing';
import { DownloaderMetrics } from './downloader.metrics';
import { DownloaderService, parseRetryAfter } from './downloader.service';
import { bodyHash, ExchangeArchive } from './exchange-archive.service';
import { CookieJarService } from './cookie-jar.service';
import { RobotsService } from './robots.service';

const ROBOTS = 'User-agent: *\nDisallow: /private\nCrawl-delay: 2\n';
const PAGE = '<html><head><title>Home</title></head><body><a href="/a">a</a></body></html>';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** The fixture site: robots.txt as the test says, a few pages, and a log of every path requested. */
function site(robots: Route) {
  const routes: Record<string, Route> = {
    '/robots.txt': robots,
    // Where a robots.txt redirect to another host leads (the other host is served by this server too).
    '/elsewhere/robots.txt': (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(ROBOTS),
    '/': (req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE),
    '/page': (req, res) =>
      req.headers['if-none-match'] === '"e1"'
        ? res.writeHead(304, { etag: '"e1"' }).end()
        : res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag: '"e1"' }).end(PAGE),
    '/max-age': (req, res) =>
      res
        .writeHead(200, {
          'content-type': 'text/html',
          'cache-control': 'max-age=600',
          age: '100',
          expires: new Date(Date.now() + 86_400_000).toUTCString(),
          etag: '"m"',
        })
        .end(PAGE),
    '/no-store': (req, res) =>
      req.headers['if-none-match'] || req.headers['if-modified-since']
        ? res.writeHead(304).end()
        : res
            .writeHead(200, {
              'content-type': 'text/html',
              'cache-control': 'no-store',
              expires: new Date(Date.now() + 86_400_000).toUTCString(),
              etag: '"n"',
              'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT',
            })
            .end(PAGE),
    '/private': (req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('secret'),
    '/private/deep': (req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('secret'),
    '/moved': (req, res) => res.writeHead(301, { location: '/new-home?x=1' }).end(),
    '/login': (req, res) =>
      res
        .writeHead(302, { location: '/page', 'set-cookie': ['sid=abc; Path=/; HttpOnly', 'evil=1; Domain=other.test', 'wide=1; Domain=test', 'gone=; Max-Age=0'] })
        .end(),
    '/offsite': (req, res) => res.writeHead(302, { location: 'https://other.test/landing' }).end(),
    '/sitemap.xml.gz': (req, res) => res.writeHead(200, { 'content-type': 'application/x-gzip' }).end(Buffer.from([0x1f, 0x8b, 8, 0])),
    '/sitemap-as-html': (req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE),
    '/image.png': (req, res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': '8' }).end(Buffer.alloc(8)),
    '/huge.png': (req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(5000, 7)),
    '/photo.jpg': (req, res) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.alloc(8)),
    '/missing': (req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not here</h1>'),
    '/error': (req, res) => res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>broken</h1>'),
    '/big': (req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${'x'.repeat(5000)}</body></html>`),
    '/boom': (req) => req.socket.destroy(),
  };
  return routes;
}

const robotsOk: Route = (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(ROBOTS);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The embedded staging, remembering what was staged. */
class RecordingStaging extends MemoryBodyStaging {
  readonly staged: string[] = [];
  async stage(body: Buffer): Promise<string> {
    const ref = await super.stage(body);
    this.staged.push(ref);
    return ref;
  }
}

async function setup(options: { robots?: Route; overrides?: Record<string, unknown>; plugins?: PluginManifest[]; siteRules?: SiteRule[]; listenOn?: string } = {}) {
  const routes = site(options.robots ?? robotsOk);
  const requested: string[] = [];
  /** When the server saw each request start, in order. */
  const arrivedAt: number[] = [];
  /** The headers of each request, in order. */
  const heard: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    requested.push(req.url!);
    heard.push(req.headers);
    arrivedAt.push(Date.now());
    const route = routes[req.url!];
    if (route) route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, options.listenOn ?? '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const port = (server.address() as AddressInfo).port;

  const dir = mkdtempSync(join(tmpdir(), 'downloader-spec-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const logFile = join(dir, 'fetch-log.jsonl');

  const sent: { queue: QueueName; payload: any }[] = [];
  const pipeline = { send: async (queue: QueueName, payload: unknown) => void sent.push({ queue, payload }) } as unknown as Pipeline;
  const state = new MemoryStateStore();
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const content = new RecordingStaging();
  // Sitemap discovery has its own tests below; elsewhere it would only add a FilterUrls message to `sent`.
  const config = {
    ...loadConfig({}, { 'downloader.userAgent': 'test-bot/1.0 (+http://127.0.0.1/about)', 'sitemaps.mode': 'off', ...options.overrides }),
    siteRules: options.siteRules,
  };
  const fetchLog = new FetchLog(pino({ enabled: false }), logFile);
  const robots = new RobotsService(state, config, fetchLog);
  let registry = noPlugins();
  if (options.plugins) {
    registry = new PluginRegistry(state, loadConfig({}, { ...config, 'plugins.enabled': options.plugins.map((p) => p.name) }), pino({ enabled: false }));
    for (const manifest of options.plugins) await registry.register(manifest);
  }
  // Writes nothing unless the test turns WARC_ALL on (storage.warcAll).
  const warcStore = new FsContentStore(join(dir, 'content'));
  const archive = new ExchangeArchive(config, warcStore, new FileRecordsStore(join(dir, 'records')), pino({ enabled: false }));
  const service = new DownloaderService(
    config,
    content,
    robots,
    pipeline,
    stats,
    fetchLog,
    new DownloaderMetrics(new Registry()),
    registry,
    new SiteSettingsService(state, config),
    archive,
    new CookieJarService(state, config),
  );
  cleanups.push(() => service.onApplicationShutdown());
  cleanups.push(() => fetchLog.close());

  const host = `made-up.test:${port}`;
  let n = 0;
  const request = (path: string, extra: Partial<FetchRequest> = {}): FetchRequest => ({
    v: SCHEMA_VERSION,
    leaseId: `l${n + 1}`,
    fetchId: `f${++n}`,
    url: `http://${host}${path}`,
    host,
    depth: 2,
    source: 'link',
    hops: 0,
    ip: '127.0.0.1',
    ...extra,
  });
  const logLines = async (): Promise<FetchLogEntry[]> => {
    await fetchLog.close();
    return readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  };
  return { service, request, requested, heard, arrivedAt, sent, pipeline, content, stats, state, config, fetchLog, logLines, host, port, archive, warcStore };
}

describe('DownloaderService', () => {
  it("sends a site's user agent and extra headers with its pages, and asks for robots.txt as the crawler itself", async () => {
    const rules = [siteRule('*.made-up.test', { userAgent: 'site-bot/2', headers: { 'Accept-Language': 'fr' } }), siteRule('other.test', { userAgent: 'no' })];
    const { service, request, requested, heard } = await setup({ siteRules: rules });
    await service.download(request('/page'));
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'fetched', status: 200 });
    expect(requested).toEqual(['/robots.txt', '/page']);
    expect(heard[0]).toMatchObject({ 'user-agent': 'test-bot/1.0 (+http://127.0.0.1/about)' });
    expect(heard[0]['accept-language']).toBeUndefined();
    expect(heard[1]).toMatchObject({ 'user-agent': 'site-bot/2', 'accept-language': 'fr' });
  });

  it('keeps what a redirecting login sets, sends it back over the seeded cookie of that name, and never with robots.txt', async () => {
    const robots: Route = (req, res) => res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'from-robots=1' }).end(ROBOTS);
    const rules = [siteRule('made-up.test', { cookies: ['seed=s1', 'sid=seeded', 'gone=1'] })];
    const { service, request, requested, heard, sent, stats } = await setup({ robots, siteRules: rules });
    await service.download(request('/login'));
    expect(await service.download(request('/login'))).toMatchObject({ kind: 'fetched', status: 302 });
    await service.download(request('/page'));
    expect(requested).toEqual(['/robots.txt', '/login', '/page']);
    expect(heard[0].cookie).toBeUndefined();
    expect(heard[1].cookie).toBe('seed=s1; sid=seeded; gone=1');
    // The site's sid replaces the seed's; another site's Domain and a public suffix were refused; an expired
    // cookie deletes only what the site set (the seed of that name is still the crawl's to send).
    expect(heard[2].cookie).toBe('seed=s1; gone=1; sid=abc');
    expect(sent.find((m) => m.queue === QueueName.FilterUrls)?.payload.urls[0]).toMatchObject({ source: 'redirect' });
    expect(await stats.totals()).toMatchObject({ 'cookies.stored': 1, 'cookies.refused': 2, 'cookies.deleted': 1 });
  });

  it("falls back to the host's next address when the first refuses, and reports, logs and counts the one used", async () => {
    const bindable = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(0, '127.0.0.2', () => probe.close(() => resolve(true)));
    });
    if (!bindable) return void console.warn('127.0.0.2 is not bindable here: skipping the failover case');
    // The site listens on 127.0.0.2 only; its name's first address, 127.0.0.3, refuses connections.
    const { service, request, requested, stats, logLines } = await setup({ listenOn: '127.0.0.2' });
    const addresses = { ip: '127.0.0.3', fallbackIps: ['127.0.0.2'] };
    expect(await service.download(request('/page', addresses))).toMatchObject({ kind: 'robots-fetched', status: 200, ip: '127.0.0.2' });
    expect(await service.download(request('/page', addresses))).toMatchObject({ kind: 'fetched', status: 200, ip: '127.0.0.2' });
    expect(requested).toEqual(['/robots.txt', '/page']);
    // Once: the page's request starts at the address that answered robots.txt (its connection is kept alive).
    expect((await stats.totals())['fetch.address-failover']).toBe(1);
    expect((await logLines()).map((line) => [new URL(line.url).pathname, line.address])).toEqual([
      ['/robots.txt', '127.0.0.2'],
      ['/page', '127.0.0.2'],
    ]);
  });

  it('spends the first turn of a site on robots.txt and hands the page back to the frontier', async () => {
    const { service, request, requested, sent } = await setup();
    const req = request('/page', { depth: 3, source: 'redirect', hops: 1 });
    const outcome = await service.download(req);
    expect(outcome).toEqual({
      v: SCHEMA_VERSION,
      leaseId: req.leaseId,
      fetchId: req.fetchId,
      url: req.url,
      host: req.host,
      ip: '127.0.0.1',
      kind: 'robots-fetched',
      requested: true,
      status: 200,
      durationMs: expect.any(Number),
      crawlDelayMs: 2000,
      retry: { url: req.url, depth: 3, source: 'redirect', hops: 1 },
    });
    expect(requested).toEqual(['/robots.txt']);
    expect(sent).toEqual([]);
  });

  it("takes up from the page's answer when handing it on failed (Redis down): the retry does not ask the site again", async () => {
    const { service, request, requested, sent, pipeline, logLines } = await setup();
    await service.download(request('/page'));
    const send = pipeline.send.bind(pipeline);
    let down = true;
    pipeline.send = async (queue, payload) => {
      if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
      return send(queue, payload);
    };
    const req = request('/page');
    await expect(service.download(req)).rejects.toThrow('ECONNREFUSED');
    expect(service.resumes(req)).toBe(true);
    await expect(service.download(req)).rejects.toThrow('ECONNREFUSED');
    down = false;
    const outcome = await service.download(req);
    expect(outcome).toMatchObject({ kind: 'fetched', status: 200, leaseId: req.leaseId });
    expect(service.resumes(req)).toBe(false);
    expect(requested).toEqual(['/robots.txt', '/page']);
    expect(sent.map((s) => s.queue)).toEqual([QueueName.Parse]);
    // One request, one line in the fetch log.
    expect((await logLines()).filter((l) => l.url === req.url)).toHaveLength(1);
    // A later lease of the same URL is a new fetch.
    await service.download(request('/page'));
    expect(requested).toEqual(['/robots.txt', '/page', '/page']);
  });

  it('counts a page once when staging its body failed (S3 down) and a retry took up from its answer', async () => {
    const { service, request, requested, content, stats } = await setup();
    await service.download(request('/page'));
    const stage = content.stage.bind(content);
    let down = true;
    content.stage = async (body) => {
      if (down) throw Object.assign(new Error('content store: connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' });
      return stage(body);
    };
    const req = request('/page');
    await expect(service.download(req)).rejects.toThrow('ECONNREFUSED');
    await expect(service.download(req)).rejects.toThrow('ECONNREFUSED');
    down = false;
    expect(await service.download(req)).toMatchObject({ kind: 'fetched', status: 200 });
    expect(requested).toEqual(['/robots.txt', '/page']);
    // One request: once fetched, once 2xx, however many deliveries it took to hand the body on.
    expect(await stats.totals()).toMatchObject({ fetched: 1, 'status.2xx': 1 });
  });

  it('fetches the page on the next turn and stages the HTML body for the parser', async () => {
    const { service, request, requested, sent, content } = await setup();
    await service.download(request('/page'));
    const req = request('/page');
    const outcome = await service.download(req);
    expect(outcome).toEqual({
      v: SCHEMA_VERSION,
      leaseId: req.leaseId,
      fetchId: req.fetchId,
      url: req.url,
      host: req.host,
      ip: '127.0.0.1',
      kind: 'fetched',
      requested: true,
      status: 200,
      durationMs: expect.any(Number),
      crawlDelayMs: 2000,
      retry: { url: req.url, depth: 2, source: 'link', hops: 0 },
      // The body read: a site's maxBytes spends it.
      bytes: 76,
    });
    expect(requested).toEqual(['/robots.txt', '/page']);
    expect(sent).toHaveLength(1);
    const [{ queue, payload }] = sent;
    expect(queue).toBe(QueueName.Parse);
    expect(payload).toEqual({
      v: SCHEMA_VERSION,
      fetchId: req.fetchId,
      url: req.url,
      depth: req.depth,
      status: 200,
      headers: expect.objectContaining({ 'content-type': 'text/html; charset=utf-8', etag: '"e1"' }),
      contentType: 'text/html; charset=utf-8',
      bodyKey: expect.stringMatching(/^staging\//),
      length: Buffer.byteLength(PAGE),
      truncated: false,
      fetchedAt: expect.any(String),
    });
    expect(new Date(payload.fetchedAt).toISOString()).toBe(payload.fetchedAt);
    expect((await content.read(payload.bodyKey))!.body.toString()).toBe(PAGE);
  });

  it('marks a body cut at maxBodyBytes as truncated', async () => {
    const { service, request, sent, content } = await setup({ overrides: { 'downloader.maxBodyBytes': 1024 } });
    await service.download(request('/'));
    await service.download(request('/big'));
    expect(sent).toHaveLength(1);
    expect(sent[0].payload).toMatchObject({ length: 1024, truncated: true });
    expect((await content.read(sent[0].payload.bodyKey))!.body).toHaveLength(1024);
  });

  it('does not start a fetch whose lease could run out before it ends, and hands the URL back', async () => {
    const { service, request, requested } = await setup();
    const req = request('/page', { leaseExpiresAt: Date.now() + 1000 });
    expect(await service.download(req)).toMatchObject({ kind: 'skipped', requested: false, retry: { url: req.url } });
    expect(requested).toEqual([]);
  });

  it('with recrawls on, a fetch carries what the next one needs: validators and a hash of the body', async () => {
    const { service, request } = await setup({ overrides: { 'frontier.recrawl': true } });
    await service.download(request('/'));
    expect(await service.download(request('/page'))).toMatchObject({ revisit: { changed: true, etag: '"e1"', bodyHash: expect.stringMatching(/^[\w-]{22}$/) } });
  });

  it('takes the freshness lifetime from Cache-Control max-age (less Age) over Expires, and keeps no validators of a no-store page', async () => {
    const { service, request, requested } = await setup({ overrides: { 'frontier.recrawl': true } });
    await service.download(request('/'));
    const before = Date.now();
    const fresh = (await service.download(request('/max-age')))!;
    expect(fresh.revisit).toMatchObject({ changed: true, etag: '"m"' });
    expect(fresh.revisit!.expiresAt).toBeGreaterThanOrEqual(before + 500_000);
    expect(fresh.revisit!.expiresAt).toBeLessThanOrEqual(Date.now() + 500_000);

    const first = (await service.download(request('/no-store')))!;
    expect(first.revisit).toEqual({ changed: true, bodyHash: expect.stringMatching(/^[\w-]{22}$/) });
    // Its recrawl asks unconditionally, and is judged by the body's hash.
    const again = (await service.download(request('/no-store', { source: 'recrawl', revisit: first.revisit })))!;
    expect(again).toMatchObject({ status: 200, revisit: { changed: false } });
    expect(requested.filter((p) => p === '/no-store')).toHaveLength(2);
  });

  it('refetches conditionally: 304 is unchanged, nothing is staged, validators carried on', async () => {
    const { service, request, sent } = await setup({ overrides: { 'frontier.recrawl': true } });
    await service.download(request('/'));
    const first = (await service.download(request('/page')))!;
    sent.length = 0;
    const again = await service.download(request('/page', { source: 'recrawl', revisit: { etag: '"e1"', bodyHash: first.revisit!.bodyHash } }));
    expect(again).toMatchObject({ kind: 'fetched', status: 304, revisit: { changed: false, etag: '"e1"', bodyHash: first.revisit!.bodyHash } });
    expect(sent).toEqual([]);
  });

  it('does not fetch a URL robots.txt disallows', async () => {
    const { service, request, requested, sent, logLines } = await setup();
    await service.download(request('/'));
    for (const path of ['/private', '/private/deep']) {
      const req = request(path);
      expect(await service.download(req)).toEqual({
        v: SCHEMA_VERSION,
        leaseId: req.leaseId,
        fetchId: req.fetchId,
        url: req.url,
        host: req.host,
        ip: '127.0.0.1',
        kind: 'disallowed',
        requested: false,
        durationMs: 0,
        crawlDelayMs: 2000,
      });
    }
    expect(requested).toEqual(['/robots.txt']);
    expect(sent).toEqual([]);
    expect((await logLines()).map((l) => l.url)).toEqual([expect.stringMatching(/\/robots\.txt$/)]);
  });

  it('sends a redirect target back through the URL filter, one hop further, without parsing', async () => {
    const { service, request, sent, host } = await setup();
    await service.download(request('/'));
    const outcome = await service.download(request('/moved', { depth: 4, hops: 2 }));
    expect(outcome).toMatchObject({ kind: 'fetched', requested: true, status: 301 });
    expect(sent).toEqual([
      {
        queue: QueueName.FilterUrls,
        payload: { v: SCHEMA_VERSION, urls: [{ url: `http://${host}/new-home?x=1`, depth: 4, source: 'redirect', hops: 3 }] },
      },
    ]);
  });

  it('sends an off-site redirect target to the filter too (the filter decides scope)', async () => {
    const { service, request, sent } = await setup();
    await service.download(request('/'));
    await service.download(request('/offsite'));
    expect(sent.map((s) => [s.queue, s.payload.urls?.[0]?.url])).toEqual([[QueueName.FilterUrls, 'https://other.test/landing']]);
  });

  it('does not hand a non-HTML body to the parser', async () => {
    const { service, request, sent, content } = await setup();
    await service.download(request('/'));
    const outcome = await service.download(request('/image.png'));
    expect(outcome).toMatchObject({ kind: 'fetched', status: 200 });
    expect(sent).toEqual([]);
    expect(content.staged).toEqual([]);
  });

  describe('routing by content type to plugins', () => {
    const png = (maxBytes?: number): PluginManifest => ({
      v: SCHEMA_VERSION,
      name: 'png',
      claims: { contentTypes: ['image/png'], extensions: ['png'], urlPatterns: [], ...(maxBytes ? { maxBytes } : {}) },
      pageHook: false,
      queue: pluginQueue('png'),
    });

    it('stages a body of a claimed type and sends it to the plugin queue, with the page that linked it', async () => {
      const { service, request, sent, content, stats } = await setup({ plugins: [png()] });
      await service.download(request('/'));
      const outcome = await service.download(request('/image.png', { referrer: `http://made-up.test/gallery` }));
      expect(outcome).toMatchObject({ kind: 'fetched', status: 200 });
      expect(sent.map((s) => s.queue)).toEqual([pluginQueue('png')]);
      const job = sent[0].payload;
      expect(job).toMatchObject({
        hook: 'fetched',
        url: expect.stringMatching(/\/image\.png$/),
        contentType: 'image/png',
        length: 8,
        truncated: false,
        source: 'http://made-up.test/gallery',
      });
      expect((await content.read(job.bodyKey))!.body).toEqual(Buffer.alloc(8));
      expect((await stats.totals())['plugin.routed.png']).toBe(1);
    });

    it('keeps the referrer of a URL put back after the robots.txt turn', async () => {
      const { service, request } = await setup({ plugins: [png()] });
      const outcome = await service.download(request('/image.png', { referrer: 'http://made-up.test/gallery' }));
      expect(outcome).toMatchObject({ kind: 'robots-fetched', retry: { referrer: 'http://made-up.test/gallery' } });
    });

    it("reads a claimed body under the plugin's own size limit, and still drops unclaimed types unread", async () => {
      const { service, request, sent, content } = await setup({ plugins: [png(1024)], overrides: { 'downloader.maxBodyBytes': 4096 } });
      await service.download(request('/'));
      await service.download(request('/huge.png'));
      expect(sent[0].payload).toMatchObject({ length: 1024, truncated: true });
      await service.download(request('/photo.jpg'));
      expect(sent).toHaveLength(1);
      expect(content.staged).toEqual([sent[0].payload.bodyKey]);
    });

    it('keeps HTML for the parser even when a plugin claims text/html', async () => {
      const html: PluginManifest = {
        ...png(),
        name: 'html-grabber',
        queue: pluginQueue('html-grabber'),
        claims: { contentTypes: ['text/*'], extensions: [], urlPatterns: [] },
      };
      const { service, request, sent } = await setup({ plugins: [html] });
      await service.download(request('/'));
      await service.download(request('/page'));
      expect(sent.map((s) => s.queue)).toEqual([QueueName.Parse]);
    });

    it('sends an HTML page whose path a plugin claims (claims.pages) to that plugin instead of the parser, and other pages to the parser', async () => {
      const render: PluginManifest = {
        ...png(),
        name: 'render',
        queue: pluginQueue('render'),
        claims: { contentTypes: [], extensions: [], urlPatterns: [], pages: ['/pa*'] },
      };
      const { service, request, sent, content, stats } = await setup({ plugins: [render] });
      await service.download(request('/'));
      await service.download(request('/page'));
      await service.download(request('/image.png'));
      expect(sent.map((s) => s.queue)).toEqual([pluginQueue('render')]);
      expect(sent[0].payload).toMatchObject({ hook: 'fetched', url: expect.stringMatching(/\/page$/), contentType: expect.stringMatching(/^text\/html/) });
      expect((await content.read(sent[0].payload.bodyKey))!.body.toString()).toContain('<');
      expect((await stats.totals())['plugin.routed.render']).toBe(1);
      const plain = await setup({ plugins: [{ ...render, claims: { ...render.claims, pages: ['/other'] } }] });
      await plain.service.download(plain.request('/'));
      await plain.service.download(plain.request('/page'));
      expect(plain.sent.map((s) => s.queue)).toEqual([QueueName.Parse]);
    });

    it("follows the site's render setting: false keeps its pages from the render plugin, true sends every HTML page of it there", async () => {
      const render: PluginManifest = {
        ...png(),
        name: 'render',
        queue: pluginQueue('render'),
        claims: { contentTypes: [], extensions: [], urlPatterns: [], pages: ['/pa*'] },
      };
      const off = await setup({ plugins: [render], siteRules: [siteRule('made-up.test', { render: false })] });
      // The first download of each is the robots.txt turn.
      for (const path of ['/', '/page', '/']) await off.service.download(off.request(path));
      expect(off.sent.map((s) => s.queue)).toEqual([QueueName.Parse, QueueName.Parse]);
      const on = await setup({ plugins: [render], siteRules: [siteRule('made-up.test', { render: true })] });
      for (const path of ['/', '/page', '/']) await on.service.download(on.request(path));
      expect(on.sent.map((s) => [s.queue, new URL(s.payload.url).pathname])).toEqual([
        [pluginQueue('render'), '/page'],
        [pluginQueue('render'), '/'],
      ]);
      expect((await on.stats.totals())['plugin.routed.render']).toBe(2);
    });
  });

  it('does not hand an error page to the parser', async () => {
    const { service, request, sent } = await setup();
    await service.download(request('/'));
    expect(await service.download(request('/missing'))).toMatchObject({ kind: 'fetched', status: 404 });
    expect(sent).toEqual([]);
  });

  it('reports a failed fetch as an error turn that did reach the host', async () => {
    const { service, request, sent, logLines } = await setup();
    await service.download(request('/'));
    const outcome = await service.download(request('/boom'));
    expect(outcome).toMatchObject({ kind: 'error', requested: true, error: expect.any(String), crawlDelayMs: 2000 });
    // Typed, so that the frontier can tell a failure that may pass from one that will not, and with the URL to retry.
    expect(outcome).toMatchObject({ errorKind: 'reset', retry: { url: expect.stringMatching(/\/boom$/), depth: 2 } });
    expect(sent).toEqual([]);
    const lines = await logLines();
    expect(lines[1]).toMatchObject({ url: expect.stringMatching(/\/boom$/), status: null, error: expect.any(String) });
  });

  it('defers every page of a host whose robots.txt answers 5xx (disallow all for now) until its next try', async () => {
    const { service, request, requested, sent } = await setup({ robots: (req, res) => res.writeHead(500).end('oops') });
    // The failed fetch is the first deferral; the next try is DOWNLOADER_ROBOTS_RETRY_MS (60 s) away, ±25%.
    const first = (await service.download(request('/')))!;
    expect(first).toMatchObject({ kind: 'deferred', cause: 'robots', requested: true, status: 500, retry: { url: expect.stringMatching(/\/$/) } });
    expect(first.retryAfterMs).toBeGreaterThanOrEqual(45_000);
    expect(first.retryAfterMs).toBeLessThanOrEqual(75_000);
    expect(first.robotsUnreachable).toMatchObject({ tries: 1, giveUp: false, giveUpAt: first.robotsUnreachable!.since + 1_800_000 });
    for (const path of ['/', '/page', '/image.png']) {
      const outcome = (await service.download(request(path)))!;
      expect(outcome).toMatchObject({
        kind: 'deferred',
        cause: 'robots',
        requested: false,
        retry: { url: expect.stringContaining(path) },
        robotsUnreachable: { tries: 1 },
      });
      expect(outcome.retryAfterMs).toBeLessThanOrEqual(first.retryAfterMs!);
    }
    expect(requested).toEqual(['/robots.txt']);
    expect(sent).toEqual([]);
  });

  it('honours the Retry-After of a robots.txt answering 503, capped at DOWNLOADER_ROBOTS_ERROR_TTL_MS', async () => {
    const { service, request } = await setup({ robots: (req, res) => res.writeHead(503, { 'retry-after': '300' }).end() });
    expect((await service.download(request('/')))!.retryAfterMs).toBe(300_000);
    const capped = await setup({ robots: (req, res) => res.writeHead(429, { 'retry-after': '86400' }).end() });
    expect((await capped.service.download(capped.request('/')))!.retryAfterMs).toBe(600_000);
  });

  it('gives a host up once its robots.txt has failed for DOWNLOADER_ROBOTS_UNREACHABLE_MAX_MS', async () => {
    const overrides = { 'downloader.robotsRetryMs': 1, 'downloader.robotsErrorTtlMs': 1, 'downloader.robotsUnreachableMaxMs': 60, 'frontier.perIpIntervalMs': 0 };
    const { service, request, requested } = await setup({ robots: (req, res) => res.writeHead(500).end(), overrides });
    const outcomes = [];
    for (let i = 0; i < 200; i++) {
      const outcome = (await service.download(request('/')))!;
      outcomes.push(outcome);
      if (outcome.robotsUnreachable?.giveUp) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const last = outcomes.at(-1)!;
    expect(last).toMatchObject({ kind: 'deferred', robotsUnreachable: { giveUp: true } });
    expect(Date.now() - last.robotsUnreachable!.since).toBeGreaterThanOrEqual(60);
    expect(requested.length).toBeGreaterThan(2);
  });

  it('defers every page of a host whose robots.txt cannot be fetched', async () => {
    const { service, request, requested } = await setup({ robots: (req) => req.socket.destroy() });
    const first = (await service.download(request('/')))!;
    expect(first).toMatchObject({ kind: 'deferred', requested: true });
    expect(first.status).toBeUndefined();
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'deferred', requested: false });
    expect(requested).toEqual(['/robots.txt']);
  });

  it('allows every page of a host whose robots.txt is missing (404)', async () => {
    const { service, request, requested, sent } = await setup({ robots: (req, res) => res.writeHead(404).end() });
    const first = (await service.download(request('/page')))!;
    expect(first).toMatchObject({ kind: 'robots-fetched', requested: true, status: 404 });
    expect(first.crawlDelayMs).toBeUndefined();
    expect(await service.download(request('/private'))).toMatchObject({ kind: 'fetched', status: 200 });
    expect(requested).toEqual(['/robots.txt', '/private']);
    expect(sent.map((s) => s.queue)).toEqual([QueueName.Parse]);
  });

  it('follows robots.txt redirects on the same host name, up to the hop limit', async () => {
    const { service, request, requested } = await setup({ robots: (req, res) => res.writeHead(301, { location: '/robots-1.txt' }).end() });
    // /robots.txt → /robots-1.txt (the site() 404s it): fetched through the redirect, 404 → allow all.
    const first = await service.download(request('/page'));
    expect(first).toMatchObject({ kind: 'robots-fetched', status: 404 });
    expect(requested).toEqual(['/robots.txt', '/robots-1.txt']);
  });

  it('never lets a robots.txt cut at the size limit end in a half rule that allows more', async () => {
    // The cut at 1024 bytes falls inside "Allow: /public/": read whole, it must not become "Allow: /".
    const head = 'User-agent: *\nDisallow: /\n';
    const filler = `${'#'.repeat(1024 - head.length - 'Allow: /'.length - 1)}\n`;
    const robots = `${head}${filler}Allow: /public/\n`;
    const { service, request } = await setup({
      robots: (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(robots),
      overrides: { 'downloader.robotsMaxBytes': 1024 },
    });
    await service.download(request('/'));
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'disallowed' });
  });

  it('logs the robots.txt bytes it kept, cut at the limit, and says it cut them; a file of exactly the limit is whole', async () => {
    const limit = 1024;
    for (const size of [limit + 500, limit]) {
      const robots = `User-agent: *\nDisallow: /private\n${'#'.repeat(size - 34)}\n`;
      expect(Buffer.byteLength(robots)).toBe(size);
      const { service, request, fetchLog, logLines } = await setup({
        robots: (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(robots),
        overrides: { 'downloader.robotsMaxBytes': limit },
      });
      const logged = jest.spyOn(fetchLog, 'robots');
      await service.download(request('/'));
      const [line] = (await logLines()).filter((entry) => entry.robots);
      expect(line).toEqual(expect.objectContaining({ status: 200, length: limit }));
      expect(line.truncated).toBe(size > limit ? true : undefined);
      expect(logged).toHaveBeenCalledWith(expect.stringMatching(/\/robots\.txt$/), 200, robots.slice(0, limit), undefined, []);
    }
  });

  it('says in the fetch log that a page body was cut at DOWNLOADER_MAX_BODY_BYTES', async () => {
    const { service, request, logLines } = await setup({ overrides: { 'downloader.maxBodyBytes': 1024 } });
    await service.download(request('/'));
    await service.download(request('/big'));
    await service.download(request('/page'));
    const [big, page] = (await logLines()).filter((entry) => !entry.robots);
    expect(big).toEqual(expect.objectContaining({ status: 200, length: 1024, truncated: true }));
    expect(page).toEqual(expect.objectContaining({ status: 200, length: PAGE.length }));
    expect(page.truncated).toBeUndefined();
  });

  it('follows a robots.txt redirect to another host through the resolver, and applies its rules to the first host', async () => {
    const robots: Route = (req, res) => res.writeHead(301, { location: `http://other.test:${req.socket.localPort}/elsewhere/robots.txt` }).end();
    const { service, request, requested, sent, logLines } = await setup({ robots });
    const page = request('/page');
    // The other host's address is not vetted yet: no request goes there, the turn goes back to the resolver.
    expect(await service.download(page)).toBeNull();
    expect(requested).toEqual(['/robots.txt']);
    const [hop] = sent;
    expect(hop).toMatchObject({
      queue: QueueName.DnsResolve,
      payload: {
        url: page.url,
        leaseId: page.leaseId,
        robotsHop: {
          url: expect.stringMatching(/^http:\/\/other\.test:\d+\/elsewhere\/robots\.txt$/),
          chain: [expect.stringMatching(/made-up\.test:\d+\/robots\.txt$/)],
          originIp: '127.0.0.1',
        },
      },
    });
    // Back from the resolver with the other host's vetted address: the chain ends there, the rules are the site's.
    const outcome = await service.download({ ...hop.payload, ip: '127.0.0.1' });
    expect(outcome).toMatchObject({ kind: 'robots-fetched', status: 200, ip: '127.0.0.1', retry: { url: page.url } });
    expect(requested).toEqual(['/robots.txt', '/elsewhere/robots.txt']);
    expect(await service.download(request('/private/x'))).toMatchObject({ kind: 'disallowed' });
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'fetched' });
    expect((await logLines()).filter((l) => l.robots).map((l) => l.status)).toEqual([301, 200]);
  });

  it('a robots.txt redirect to a host the resolver refused makes robots.txt unreachable (disallow all for now)', async () => {
    const robots: Route = (req, res) => res.writeHead(302, { location: 'http://inside.test/robots.txt' }).end();
    const { service, request, requested, sent } = await setup({ robots });
    await service.download(request('/page'));
    const refused = { ...sent[0].payload, robotsHop: { ...sent[0].payload.robotsHop, refusal: 'address 10.0.0.1 is not public' } };
    expect(await service.download(refused)).toMatchObject({ kind: 'deferred', requested: true, ip: '127.0.0.1', robotsUnreachable: { tries: 1, giveUp: false } });
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'deferred', requested: false });
    expect(requested).toEqual(['/robots.txt']);
  });

  it('follows DOWNLOADER_MAX_REDIRECTS robots.txt redirects; one more means unavailable (allow all)', async () => {
    const { service, request, requested } = await setup({
      robots: (req, res) => res.writeHead(302, { location: '/robots.txt' }).end(),
      overrides: { 'downloader.maxRedirects': 3 },
    });
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'robots-fetched', status: 302 });
    expect(requested).toEqual(['/robots.txt', '/robots.txt', '/robots.txt', '/robots.txt']);
    expect(await service.download(request('/private'))).toMatchObject({ kind: 'fetched', status: 200 });
  });

  it('obeys a 2 MiB robots.txt up to its first 500 KiB, and survives garbage', async () => {
    const big = `User-agent: *\nDisallow: /private\n${'# filler\n'.repeat(260_000)}Disallow: /page\n`;
    const { service, request } = await setup({ robots: (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(big) });
    await service.download(request('/'));
    expect(await service.download(request('/private'))).toMatchObject({ kind: 'disallowed' });
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'fetched' }); // its rule lies past the limit
    const garbage = await setup({ robots: (req, res) => res.writeHead(200).end(Buffer.from([0, 159, 146, 150, 255, 10, 13, 0])) });
    await garbage.service.download(garbage.request('/'));
    expect(await garbage.service.download(garbage.request('/page'))).toMatchObject({ kind: 'fetched' });
  });

  it('shares robots.txt between downloader replicas through the state store', async () => {
    const { service, request, requested, state, config, fetchLog, archive } = await setup();
    await service.download(request('/'));
    const sent: unknown[] = [];
    const pipeline = { send: async (_q: QueueName, payload: unknown) => void sent.push(payload) } as unknown as Pipeline;
    const stats = new CrawlStats(state, new Registry(), loadConfig({}));
    const dir = mkdtempSync(join(tmpdir(), 'downloader-spec-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const replica = new DownloaderService(
      config,
      new RecordingStaging(),
      new RobotsService(state, config, fetchLog),
      pipeline,
      stats,
      fetchLog,
      new DownloaderMetrics(new Registry()),
      noPlugins(),
      new SiteSettingsService(state, config),
      archive,
      new CookieJarService(state, config),
    );
    cleanups.push(() => replica.onApplicationShutdown());
    expect(await replica.download(request('/private'))).toMatchObject({ kind: 'disallowed' });
    expect(await replica.download(request('/page'))).toMatchObject({ kind: 'fetched', status: 200 });
    expect(requested).toEqual(['/robots.txt', '/page']);
  });

  it('keeps one robots.txt per scheme, host and port', async () => {
    const { service, request, requested, port } = await setup();
    await service.download(request('/'));
    // The same server under another name is another site: its robots.txt is fetched again.
    const other = request('/', { url: `http://other-name.test:${port}/`, host: `other-name.test:${port}` });
    expect(await service.download(other)).toMatchObject({ kind: 'robots-fetched' });
    expect(requested).toEqual(['/robots.txt', '/robots.txt']);
  });

  /** A bare TCP listener standing in for Redis, SMTP…: it counts the connections it is offered. */
  async function infrastructure() {
    const listener = { connections: 0, port: 0 };
    const server = net.createServer((socket) => {
      listener.connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    listener.port = (server.address() as AddressInfo).port;
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return listener;
  }

  it('refuses a URL on a refused port without any request, robots.txt included (queued before the rule changed)', async () => {
    const probe = await setup();
    const { service, request, requested, stats } = await setup({ overrides: { 'filter.blockedPorts': [String(probe.port)] } });
    const outcome = await service.download(request('/page', { url: `http://made-up.test:${probe.port}/page`, host: `made-up.test:${probe.port}` }));
    expect(outcome).toMatchObject({
      kind: 'error',
      requested: false,
      durationMs: 0,
      error: expect.stringMatching(new RegExp(`^port ${probe.port} is in URL_FILTER_BLOCKED_PORTS`)),
    });
    expect(requested).toEqual([]);
    expect(probe.requested).toEqual([]);
    expect((await stats.totals())['error.port-refused']).toBe(1);
  });

  it('treats a robots.txt redirect to a refused port of the same host as unreachable (disallow), and never connects there', async () => {
    const redis = await infrastructure();
    const { service, request, requested } = await setup({
      robots: (req, res) => res.writeHead(302, { location: `http://made-up.test:${redis.port}/robots.txt` }).end(),
      overrides: { 'filter.blockedPorts': [String(redis.port)] },
    });
    expect(await service.download(request('/page'))).toMatchObject({ kind: 'deferred' });
    expect(await service.download(request('/private'))).toMatchObject({ kind: 'deferred' });
    expect(requested).toEqual(['/robots.txt']);
    expect(redis.connections).toBe(0);
  });

  it('refuses a request without a vetted address', async () => {
    const { service, request, requested } = await setup();
    const outcome = await service.download(request('/', { ip: undefined }));
    expect(outcome).toMatchObject({ kind: 'error', requested: false, error: 'no vetted address', durationMs: 0 });
    expect(requested).toEqual([]);
  });

  it('writes one fetch-log line per request', async () => {
    const { service, request, logLines, host } = await setup();
    await service.download(request('/page'));
    await service.download(request('/page'));
    await service.download(request('/private'));
    await service.download(request('/moved'));
    await service.download(request('/image.png'));
    const lines = await logLines();
    expect(lines.map((l) => [l.url, l.status, l.robots ?? false])).toEqual([
      [`http://${host}/robots.txt`, 200, true],
      [`http://${host}/page`, 200, false],
      [`http://${host}/moved`, 301, false],
      [`http://${host}/image.png`, 200, false],
    ]);
    expect(lines[0]).toMatchObject({ contentType: 'text/plain', length: Buffer.byteLength(ROBOTS), location: null });
    expect(lines[1]).toMatchObject({ contentType: 'text/html; charset=utf-8', length: Buffer.byteLength(PAGE) });
    expect(lines[2]).toMatchObject({ location: '/new-home?x=1' });
    expect(lines[3]).toMatchObject({ contentType: 'image/png', length: 8 });
    for (const line of lines) expect(new Date(line.time).toISOString()).toBe(line.time);
  });

  it('counts what happened', async () => {
    const { service, request, stats } = await setup();
    await service.download(request('/'));
    await service.download(request('/page'));
    await service.download(request('/private'));
    await service.download(request('/moved'));
    expect(await stats.totals()).toEqual({
      'robots.fetched': 1,
      fetched: 2,
      'status.2xx': 1,
      'status.3xx': 1,
      disallowed: 1,
      // The body of the one page read (FRONTIER_MAX_BYTES spends it); a redirect's body is not read.
      'bytes.fetched': 76,
    });
  });

  describe('regressions', () => {
    it('refetches robots.txt when the cached policy is corrupt', async () => {
      const { service, request, state, port } = await setup();
      await state.namespace('robots').set(`http_made-up.test_${port}`, 'not json');
      await expect(service.download(request('/page'))).resolves.toMatchObject({ kind: 'robots-fetched', status: 200 });
    });

    it('writes a fetch-log line for a robots.txt request that failed', async () => {
      const { service, request, requested, logLines } = await setup({ robots: (req) => req.socket.destroy() });
      await service.download(request('/'));
      expect(requested).toEqual(['/robots.txt']);
      expect(await logLines()).toEqual([expect.objectContaining({ url: expect.stringMatching(/\/robots\.txt$/), robots: true })]);
    });
  });
});

describe('DownloaderService per-address interval', () => {
  it('spaces its own requests to one address by FRONTIER_PER_IP_INTERVAL_MS, even when two arrive together', async () => {
    const { service, request, arrivedAt } = await setup({ overrides: { 'frontier.perIpIntervalMs': 150 } });
    await service.download(request('/')); // robots.txt
    await Promise.all(['/', '/page'].map((path) => service.download(request(path))));
    // As the server saw them start: unpaced they arrive a few ms apart. The margin under 150 ms is the first
    // one's own way to the server (a loaded machine delays it after the downloader's clock has started).
    expect(arrivedAt[2] - arrivedAt[1]).toBeGreaterThanOrEqual(110);
  });

  it('spaces a request from when the one before it left, not from when that one was due to (its timer can fire late)', async () => {
    const { service, request, arrivedAt } = await setup({ overrides: { 'frontier.perIpIntervalMs': 300 } });
    await service.download(request('/')); // robots.txt
    await new Promise((resolve) => setTimeout(resolve, 300));
    arrivedAt.length = 0;
    // The first leaves at once and the second is due 300 ms later. Just before that, the event loop is held up
    // for 160 ms (a GC pause, a busy process): the second leaves late. The third, asked for in between, must
    // still leave 300 ms after the second did.
    const held = new Promise<void>((resolve) =>
      setTimeout(() => {
        const until = Date.now() + 160;
        while (Date.now() < until);
        resolve();
      }, 290),
    );
    const third = new Promise((resolve) => setTimeout(resolve, 250)).then(() => service.download(request('/c')));
    await Promise.all([service.download(request('/a')), service.download(request('/b')), third, held]);
    expect(arrivedAt).toHaveLength(3);
    expect(arrivedAt[1] - arrivedAt[0]).toBeGreaterThanOrEqual(250);
    expect(arrivedAt[2] - arrivedAt[1]).toBeGreaterThanOrEqual(250);
  });

  it('spaces them by the interval the frontier paced the address at (an allowance grown with its domains), not the base one', async () => {
    const { service, request, arrivedAt } = await setup({ overrides: { 'frontier.perIpIntervalMs': 600 } });
    await service.download(request('/', { ipIntervalMs: 40 })); // robots.txt
    await Promise.all(['/', '/page'].map((path) => service.download(request(path, { ipIntervalMs: 40 }))));
    // As the server saw them start: not the base 600 ms apart.
    expect(arrivedAt[2] - arrivedAt[1]).toBeLessThan(300);
  });
});

describe('DownloaderService sitemaps', () => {
  const sitemapBatches = (sent: { queue: QueueName; payload: any }[]) => sent.filter((s) => s.queue === QueueName.FilterUrls).map((s) => s.payload.urls);

  it("feeds robots.txt's Sitemap lines to the filter as sitemap documents, at the depth of the page that brought them", async () => {
    const robots: Route = (req, res) => res.writeHead(200).end('User-agent: *\nDisallow:\nSitemap: /s/index.xml\nSitemap: https://cdn.test/map.xml.gz\n');
    const { service, request, sent, host } = await setup({ robots, overrides: { 'sitemaps.mode': 'robots+probe' } });
    await service.download(request('/page', { depth: 4 }));
    expect(sitemapBatches(sent)).toEqual([
      [
        { url: `http://${host}/s/index.xml`, kind: 'sitemap', depth: 4, source: 'sitemap', hops: 0 },
        { url: 'https://cdn.test/map.xml.gz', kind: 'sitemap', depth: 4, source: 'sitemap', hops: 0 },
      ],
    ]);
  });

  it('probes /sitemap.xml when robots.txt names none (or is missing), only in robots+probe mode', async () => {
    for (const robots of [robotsOk, ((req, res) => res.writeHead(404).end()) as Route]) {
      const probe = await setup({ robots, overrides: { 'sitemaps.mode': 'robots+probe' } });
      await probe.service.download(probe.request('/'));
      expect(sitemapBatches(probe.sent)).toEqual([[{ url: `http://${probe.host}/sitemap.xml`, kind: 'sitemap', depth: 2, source: 'sitemap', hops: 0 }]]);
    }
    const noProbe = await setup({ overrides: { 'sitemaps.mode': 'robots' } });
    await noProbe.service.download(noProbe.request('/'));
    expect(noProbe.sent).toEqual([]);
  });

  it('caches robots.txt only once its sitemaps are sent, so a crash in between cannot lose them', async () => {
    const { service, request, requested, sent, pipeline, host } = await setup({ overrides: { 'sitemaps.mode': 'robots+probe' } });
    const send = pipeline.send;
    pipeline.send = async () => {
      throw new Error('Connection is closed.');
    };
    await expect(service.download(request('/'))).rejects.toThrow('Connection is closed.');
    pipeline.send = send;
    // The redelivered URL finds no cached policy: robots.txt again, and this time its sitemap goes out.
    await expect(service.download(request('/'))).resolves.toMatchObject({ kind: 'robots-fetched' });
    expect(requested.filter((path) => path === '/robots.txt')).toHaveLength(2);
    expect(sitemapBatches(sent)).toEqual([[{ url: `http://${host}/sitemap.xml`, kind: 'sitemap', depth: 2, source: 'sitemap', hops: 0 }]]);
  });

  it('learns nothing of sitemaps from a robots.txt that failed', async () => {
    const { service, request, sent } = await setup({ robots: (req, res) => res.writeHead(503).end(), overrides: { 'sitemaps.mode': 'robots+probe' } });
    await service.download(request('/'));
    expect(sent).toEqual([]);
  });

  it('hands a gzip sitemap to the parser as a sitemap, and drops an HTML answer to a sitemap request unread', async () => {
    const { service, request, sent, content } = await setup();
    await service.download(request('/'));
    const outcome = await service.download(request('/sitemap.xml.gz', { kind: 'sitemap', source: 'sitemap' }));
    expect(outcome).toMatchObject({ kind: 'fetched', status: 200, retry: { kind: 'sitemap' } });
    const [parse] = sent.filter((s) => s.queue === QueueName.Parse);
    expect(parse.payload).toMatchObject({ kind: 'sitemap', contentType: 'application/x-gzip', length: 4 });
    expect((await content.read(parse.payload.bodyKey))!.body).toEqual(Buffer.from([0x1f, 0x8b, 8, 0]));
    await service.download(request('/sitemap-as-html', { kind: 'sitemap', source: 'sitemap' }));
    expect(sent.filter((s) => s.queue === QueueName.Parse)).toHaveLength(1);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, and ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('DownloaderService with WARC_ALL', () => {
  it('records every exchange, robots.txt, redirect, 404, 500, cut and unread bodies, each with its request; a 304 and a known payload as revisits', async () => {
    const { service, request, archive, warcStore, host } = await setup({ overrides: { 'storage.warcAll': true, 'downloader.maxBodyBytes': 1024 } });
    const url = (path: string) => `http://${host}${path}`;
    await service.download(request('/page')); // robots.txt first
    for (const path of ['/page', '/moved', '/missing', '/error', '/big', '/image.png', '/']) await service.download(request(path));
    await service.download(request('/page', { revisit: { etag: '"e1"', bodyHash: bodyHash(Buffer.from(PAGE)) } }));
    await archive.onApplicationShutdown();

    const keys = (await collectKeys(warcStore.list('warc/'))).filter((key) => key.endsWith('.warc.gz'));
    expect(keys).toHaveLength(1);
    const records = await readWarcFile((await warcStore.get(keys[0]))!.body);
    expect(pairingProblems(records)).toEqual([]);
    const answers = records.filter((r) => r.type === 'response' || r.type === 'revisit');
    expect(answers.map((r) => [r.type, r.uri, r.status])).toEqual([
      ['response', url('/robots.txt'), 200],
      ['response', url('/page'), 200],
      ['response', url('/moved'), 301],
      ['response', url('/missing'), 404],
      ['response', url('/error'), 500],
      ['response', url('/big'), 200],
      ['response', url('/image.png'), 200],
      ['revisit', url('/'), 200],
      ['revisit', url('/page'), 304],
    ]);
    const [robots, page, , missing, error, big, image, copy, notModified] = answers;
    expect(robots.payload.toString()).toBe(ROBOTS);
    expect(page.payload.toString()).toBe(PAGE);
    expect(missing.payload.toString()).toBe('<h1>not here</h1>');
    expect(error.payload.toString()).toBe('<h1>broken</h1>');
    expect(answers.every((r) => r.header('WARC-IP-Address') === '127.0.0.1')).toBe(true);
    // Cut at the downloader's limit, and said so; a type nobody wanted is never read.
    expect([big.payload.length, big.header('WARC-Truncated')]).toEqual([1024, 'length']);
    expect([image.payload.length, image.header('WARC-Truncated')]).toEqual([0, 'unspecified']);
    expect(page.header('WARC-Truncated')).toBeNull();
    // The same bytes at another URL, and the page unchanged (304): the payload is /page's first capture.
    expect(copy.header('WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/identical-payload-digest');
    expect(notModified.header('WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/server-not-modified');
    for (const revisit of [copy, notModified]) {
      expect(revisit.header('WARC-Refers-To')).toBe(page.id);
      expect(revisit.header('WARC-Refers-To-Target-URI')).toBe(url('/page'));
      expect(revisit.header('WARC-Refers-To-Date')).toBe(page.header('WARC-Date'));
    }
    // The request records hold what was sent: the conditional header of the refetch among it.
    const requestOf = (answer: { id: string }) => records.find((r) => r.type === 'request' && r.header('WARC-Concurrent-To') === answer.id)!;
    const sent = requestOf(notModified).block.toString();
    expect(sent).toContain('GET /page HTTP/1.1');
    expect(sent).toContain('if-none-match: "e1"');
  });

  it("records a logged-in request with its cookie and authorization values hidden, the site's answer whole", async () => {
    const rules = [siteRule('made-up.test', { cookies: ['sid=very-secret-session'], headers: { Authorization: 'Bearer very-secret-token', 'Accept-Language': 'fr' } })];
    const { service, request, archive, warcStore, heard } = await setup({ overrides: { 'storage.warcAll': true }, siteRules: rules });
    await service.download(request('/page'));
    await service.download(request('/page'));
    await archive.onApplicationShutdown();
    expect(heard[1]).toMatchObject({ cookie: 'sid=very-secret-session', authorization: 'Bearer very-secret-token' });
    const [key] = (await collectKeys(warcStore.list('warc/'))).filter((k) => k.endsWith('.warc.gz'));
    const records = await readWarcFile((await warcStore.get(key))!.body);
    const sent = records.filter((r) => r.type === 'request').map((r) => r.block.toString());
    expect(sent[1]).toMatch(/^cookie: \(hidden\)\r?$/m);
    expect(sent[1]).toMatch(/^Authorization: \(hidden\)\r?$/im);
    expect(sent[1]).toMatch(/^accept-language: fr\r?$/im);
    expect(sent.join('\n')).not.toContain('very-secret');
  });

  it('writes nothing without it', async () => {
    const { service, request, archive, warcStore } = await setup();
    await service.download(request('/page'));
    await service.download(request('/missing'));
    await archive.onApplicationShutdown();
    expect(await collectKeys(warcStore.list('warc/'))).toEqual([]);
  });
});
