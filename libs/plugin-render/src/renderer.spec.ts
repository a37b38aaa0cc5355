import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import { loadConfig } from '@crawler/config';
import { CachedResolver, ResolverEvents } from '@crawler/net';
import { MemoryFrontierStore } from '@crawler/frontier-store';
import { RobotsCache } from '@crawler/robots';
import { MemoryStateStore } from '@crawler/state';
import { PortPolicy } from '@crawler/url';
import { BrowserCrashedError, BrowserPool } from './browser-pool';
import { CHROMIUM_NAMES, findOnPath } from './render.config';
import { Renderer, RenderOptions } from './renderer';
import { SubrequestGate } from './subrequest-gate';

/**
 * The renderer on a real Chromium against a local web on 127.0.0.1 (the host `app.test`, allowed by a
 * /32 as a crawl would allow its test web) and 127.0.0.2 (loopback the crawl does not allow).
 */
/** The crawl's resolver, its events counted nowhere. */
const QUIET: ResolverEvents = { count: async () => undefined, lookup: () => undefined, refresh: () => undefined, warn: () => undefined };

const chromiumPath = findOnPath(CHROMIUM_NAMES);
if (!chromiumPath) throw new Error('the render plugin tests need Chromium: apt-get install chromium (.ci/run does)');

const PAGES: Record<string, { type: string; body: string; delayMs?: number }> = {
  '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /private/\n' },
  '/': { type: 'text/html', body: '<html><body><div id="root"></div><img src="/logo.png"><script src="/app.js"></script></body></html>' },
  '/app.js': {
    type: 'application/javascript',
    body: `fetch('/links.json').then((r) => r.json()).then((links) => {
      document.getElementById('root').innerHTML = links.map((l) => '<a href="' + l + '">' + l + '</a>').join('');
    });`,
  },
  '/links.json': { type: 'application/json', body: JSON.stringify(['/p/1', '/p/2']) },
  '/loop': { type: 'text/html', body: '<html><body><p>before</p><script>for (;;) {}</script></body></html>' },
  '/slow': { type: 'text/html', body: '<html><body><script>fetch("/slow.json")</script></body></html>' },
  '/slow.json': { type: 'application/json', body: '[]', delayMs: 5000 },
  '/private/data.json': { type: 'application/json', body: '["/secret"]' },
  '/secret': { type: 'text/plain', body: 'secret' },
  '/logo.png': { type: 'image/png', body: 'not really' },
};

describe('Renderer (real Chromium)', () => {
  const requests: { address: string; path: string }[] = [];
  const servers: http.Server[] = [];
  let port = 0;
  /** A bare listener standing in for the crawler's own Redis: it counts the connections it is offered. */
  let infrastructure: net.Server;
  let infraPort = 0;
  let infraConnections = 0;
  let pool: BrowserPool;
  const options: RenderOptions = { timeoutMs: 3000, settleMs: 500, blockTypes: ['image', 'font', 'media'], maxSubrequests: 50 };
  let renderer: Renderer;
  const url = (path: string) => `http://app.test:${port}${path}`;
  const doc = (path: string, html = PAGES[path].body) => ({ url: url(path), status: 200, contentType: 'text/html; charset=utf-8', body: Buffer.from(html) });

  beforeAll(async () => {
    infrastructure = net.createServer((socket) => {
      infraConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => infrastructure.listen(0, '127.0.0.1', resolve));
    infraPort = (infrastructure.address() as AddressInfo).port;
    const handler: http.RequestListener = (req, res) => {
      requests.push({ address: req.socket.localAddress!.replace(/^::ffff:/, ''), path: req.url! });
      // To an address literal: the browser, following a redirect by itself, would need no name resolved.
      if (req.url === '/to-infra') return res.writeHead(302, { location: `http://127.0.0.1:${infraPort}/landing` }).end();
      if (req.url === '/moved') return res.writeHead(301, { location: '/links.json' }).end();
      const page = PAGES[req.url!];
      if (!page) return res.writeHead(404).end();
      setTimeout(() => res.writeHead(200, { 'content-type': page.type }).end(page.body), page.delayMs ?? 0);
    };
    for (const address of ['127.0.0.1', '127.0.0.2']) {
      const server = http.createServer(handler);
      await new Promise<void>((resolve) => server.listen(port, address, resolve));
      port = (server.address() as AddressInfo).port;
      servers.push(server);
    }
    pool = new BrowserPool({ chromiumPath: chromiumPath!, contexts: 2, maxHeapMb: 128 });
    await pool.start();
    const gate = new SubrequestGate({
      resolver: new CachedResolver(
        new MemoryStateStore(),
        loadConfig({}, { 'dns.allowCidrs': ['127.0.0.1/32'], 'dns.hosts': { 'app.test': '127.0.0.1', 'inside.test': '127.0.0.2' } }).dns,
        QUIET,
      ),
      ports: new PortPolicy({ own: [infraPort] }),
      userAgent: 'TestBot/1.0',
      maxBytes: 1 << 20,
      robots: new RobotsCache(new MemoryStateStore()),
      onRobots: () => undefined,
      robotsTtlMs: 60_000,
      robotsMaxBytes: 512_000,
      frontier: new MemoryFrontierStore({ frontQueues: 1, backQueues: 1, priorityBias: 2, auditLength: 1, perHostLimit: 1, perIpLimit: 8, perIpIntervalMs: 0 }),
      turnLeaseMs: 15_000,
      politeness: { minDelayMs: 0, delayMultiplier: 0, recentResponses: 5, maxBackoffMs: 3_600_000, allowDelayBelowMin: false },
      maxRedirects: 5,
    });
    renderer = new Renderer(pool, gate, options);
  }, 30_000);

  afterAll(async () => {
    await pool?.close();
    infrastructure?.close();
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
  });
  beforeEach(() => (requests.length = 0));

  it('renders a page whose links a script writes from JSON; the page itself is not fetched again; images are blocked', async () => {
    const outcome = await renderer.render(doc('/'));
    expect(outcome.kind).toBe('rendered');
    if (outcome.kind !== 'rendered') return;
    expect(outcome.html).toContain('<a href="/p/1">/p/1</a><a href="/p/2">/p/2</a>');
    expect(requests.map((r) => r.path).sort()).toEqual(['/app.js', '/links.json', '/robots.txt']);
    expect(outcome.refused).toEqual([{ url: url('/logo.png'), reason: 'blocked-type', detail: 'image' }]);
  }, 20_000);

  it('cuts a script that loops for ever at the time limit, and the browser renders on after', async () => {
    const started = Date.now();
    const outcome = await renderer.render(doc('/loop'));
    expect(outcome.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(options.timeoutMs + 3000);
    expect((await renderer.render(doc('/'))).kind).toBe('rendered');
  }, 30_000);

  it('refuses sub-requests to a loopback or metadata address the crawl does not allow, to other schemes, and those robots.txt disallows', async () => {
    const html = `<html><body><script>
      for (const u of ['http://127.0.0.2:${port}/secret', 'http://inside.test:${port}/secret', 'http://169.254.169.254/latest/meta-data/', '/private/data.json', 'ftp://app.test/x'])
        fetch(u).catch(() => {});
    </script></body></html>`;
    const outcome = await renderer.render(doc('/ssrf', html));
    expect(outcome.kind).toBe('rendered');
    const reasons = Object.fromEntries(outcome.refused.map((r) => [r.url, r.reason]));
    expect(reasons).toMatchObject({
      [`http://127.0.0.2:${port}/secret`]: 'address',
      [`http://inside.test:${port}/secret`]: 'address',
      'http://169.254.169.254/latest/meta-data/': 'address',
      [url('/private/data.json')]: 'robots',
    });
    // Nothing reached the address the crawl does not allow, nor the disallowed path.
    expect(requests.filter((r) => r.address === '127.0.0.2' || r.path.startsWith('/private/') || r.path === '/secret')).toEqual([]);
  }, 20_000);

  it("never connects to a refused port of an allowed host: not for a script's request, a frame, nor a redirect there", async () => {
    const infra = `http://app.test:${infraPort}`;
    const html = `<html><body><iframe src="${infra}/frame"></iframe><script>
      fetch('/to-infra').catch(() => {});
      fetch('${infra}/keys').catch(() => {});
    </script></body></html>`;
    const outcome = await renderer.render(doc('/ports', html));
    expect(outcome.kind).toBe('rendered');
    expect(infraConnections).toBe(0);
    expect(requests.map((r) => r.path)).toContain('/to-infra');
    const refused = Object.fromEntries(outcome.refused.map((r) => [r.url, r.reason]));
    expect(refused).toEqual({ [`${infra}/frame`]: 'port', [`${infra}/keys`]: 'port', [url('/to-infra')]: 'port' });
    expect(outcome.refused.find((r) => r.url === url('/to-infra'))?.detail).toContain(`redirected to http://127.0.0.1:${infraPort}/landing`);
  }, 20_000);

  it('follows an allowed redirect itself and gives the page the answer at its end', async () => {
    const html = `<html><body><div id="out"></div><script>
      fetch('/moved').then((r) => r.json()).then((links) => (document.getElementById('out').textContent = links.join(' ')));
    </script></body></html>`;
    const outcome = await renderer.render(doc('/redirected', html));
    expect(outcome.kind === 'rendered' && outcome.html).toContain('<div id="out">/p/1 /p/2</div>');
    expect(requests.map((r) => r.path).filter((p) => p !== '/robots.txt')).toEqual(['/moved', '/links.json']);
  }, 20_000);

  it('closes every WebSocket unopened, and its server is never connected to', async () => {
    const html = `<html><body><p id="ws">pending</p><script>
      const ws = new WebSocket('ws://127.0.0.1:${infraPort}/socket');
      ws.onclose = () => (document.getElementById('ws').textContent = 'closed');
    </script></body></html>`;
    const outcome = await renderer.render(doc('/ws', html));
    expect(outcome.kind === 'rendered' && outcome.html).toContain('<p id="ws">closed</p>');
    expect(outcome.refused).toEqual([{ url: `ws://127.0.0.1:${infraPort}/socket`, reason: 'websocket' }]);
    expect(infraConnections).toBe(0);
  }, 20_000);

  it('fails a render whose browser dies as a crash (to be retried), and starts a new browser for the next', async () => {
    const launches = pool.launches;
    const render = renderer.render(doc('/slow'));
    for (let i = 0; i < 100 && !requests.some((r) => r.path === '/slow.json'); i++) await new Promise((r) => setTimeout(r, 50));
    process.kill(pool.pid()!, 'SIGKILL');
    await expect(render).rejects.toBeInstanceOf(BrowserCrashedError);
    expect((await renderer.render(doc('/'))).kind).toBe('rendered');
    expect(pool.launches).toBe(launches + 1);
  }, 30_000);

  it('crashes a page over the memory limit (its renderer dies), as a crash to be retried; no page may open chrome://crash', async () => {
    const hog = '<html><body><script>const keep = []; for (;;) keep.push(new Array(1 << 20).fill(Math.random()));</script></body></html>';
    await expect(renderer.render(doc('/hog', hog))).rejects.toBeInstanceOf(BrowserCrashedError);
    const crash = await renderer.render(doc('/crash', `<html><body><script>location.href = 'chrome://crash'</script></body></html>`));
    expect(crash.kind).toBe('rendered');
    expect((await renderer.render(doc('/'))).kind).toBe('rendered');
  }, 30_000);
});
