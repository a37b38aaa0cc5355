import http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { runCrawlCli } from '../support/run-crawl-cli';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/** The first ```yaml block of docs/crawl-config.md: the worked example, run here as the docs show it. */
function exampleFromDocs(): string {
  const doc = readFileSync(join(__dirname, '../../docs/crawl-config.md'), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('### Worked example')));
  if (!block) throw new Error('docs/crawl-config.md has no yaml block under "Worked example"');
  return block[1];
}

interface Heard {
  host: string;
  path: string;
  agent?: string;
  language?: string;
  at: number;
}

/**
 * Each host: / links to /a1…/a5, each /aN to /bN, each /bN to /cN (depths 1, 2, 3 from the seed). The
 * example gives docs.example.com a depth of 2 and 20 pages, the other hosts of example.com 3 pages.
 */
function site(heard: Heard[]) {
  return http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    heard.push({ host, path, agent: req.headers['user-agent'], language: req.headers['accept-language'], at: Date.now() });
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    const next = path === '/' ? [1, 2, 3, 4, 5].map((i) => `/a${i}`) : /^\/[ab]\d$/.test(path) ? [`/${path[1] === 'a' ? 'b' : 'c'}${path[2]}`] : [];
    if (path !== '/' && !/^\/[abc]\d$/.test(path)) return void res.writeHead(404).end();
    const links = next.map((p) => `<a href="${p}">${p}</a>`).join(' ');
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>${host}${path}</title><p>${links}</p>`);
  });
}

describe('the embedded crawl with per-site settings (docs/crawl-config.md)', () => {
  const heard: Heard[] = [];
  let server: http.Server;
  let port: number;
  const hosts = ['docs.example.com', 'www.example.com', 'other.test'];

  beforeAll(async () => {
    server = site(heard);
    port = await listenOnLoopback(server);
  });

  afterAll(async () => {
    await closeServer(server);
    removeTempDirs();
  });

  const crawl = (args: string[], out: string) =>
    runCrawlCli([...args, '--out', out, '--json', '--allow-private', '--sitemaps', 'off', ...hosts.flatMap((h) => ['--resolve', `${h}=127.0.0.1`])], {
      env: { ...process.env, REDIS_URL: '', S3_URL: '', FRONTIER_PER_IP_INTERVAL_MS: '0' },
      timeoutMs: 90_000,
    });

  it('crawls the worked example: each host with its own delay, budget, depth, user agent and headers', async () => {
    const dir = tempDir('site-settings-');
    writeFileSync(join(dir, 'sites.yaml'), exampleFromDocs());
    const seeds = hosts.map((h) => `http://${h}:${port}/`);
    const { code, stdout, stderr } = await crawl(['--site-settings', join(dir, 'sites.yaml'), '--delay', '0.5', ...seeds], join(dir, 'out'));
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const pages = (host: string) => heard.filter((h) => h.host === host && h.path !== '/robots.txt');

    // docs.example.com: its own depth (no /cN, depth 3), within its own 20 pages; its agent and language, robots.txt asked as the crawler.
    expect(
      pages('docs.example.com')
        .map((h) => h.path)
        .sort(),
    ).toEqual(['/', '/a1', '/a2', '/a3', '/a4', '/a5', '/b1', '/b2', '/b3', '/b4', '/b5']);
    expect(new Set(pages('docs.example.com').map((h) => `${h.agent} ${h.language}`))).toEqual(new Set(['ExampleDocsBot/1.0 (+https://example.org/bot) en']));
    const robots = heard.find((h) => h.host === 'docs.example.com' && h.path === '/robots.txt')!;
    expect(robots.agent).not.toMatch(/ExampleDocsBot/);
    expect(robots.language).toBeUndefined();
    // www.example.com: the domain's 3 pages, 1 s apart at least, with the crawler's own agent.
    const www = pages('www.example.com');
    expect(www).toHaveLength(3);
    expect(www.every((h) => h.agent === robots.agent && h.language === undefined)).toBe(true);
    for (let i = 1; i < www.length; i++) expect(www[i].at - www[i - 1].at).toBeGreaterThanOrEqual(1000);
    // docs at its own 500 ms; another domain keeps the crawl's settings (no budget: every page).
    const docs = pages('docs.example.com');
    for (let i = 1; i < docs.length; i++) expect(docs[i].at - docs[i - 1].at).toBeGreaterThanOrEqual(500);
    expect(pages('other.test')).toHaveLength(16);
    const summary = JSON.parse(stdout);
    expect(summary.pagesFetched).toBe(11 + 3 + 16);
    expect(summary.totals['frontier.site-depth']).toBe(5);
    expect(summary.totals['frontier.site-budget']).toBeGreaterThan(0);
  }, 120_000);

  it('refuses a bad settings file before crawling, naming the line and field of each problem', async () => {
    const dir = tempDir('site-settings-bad-');
    const file = join(dir, 'sites.yaml');
    writeFileSync(file, 'sites:\n  docs.example.com:\n    maxPages: 0\n  "*.example.com":\n    concurrency: 40\n');
    const before = heard.length;
    const { code, stderr } = await crawl(['--site-settings', file, `http://docs.example.com:${port}/`], join(dir, 'out'));
    expect(code).toBe(2);
    expect(stderr).toContain(`${file}:3:15: sites."docs.example.com".maxPages: `);
    expect(stderr).toContain(`${file}:5:18: sites."*.example.com".concurrency: Too big: expected number to be <=16`);
    expect(heard.length).toBe(before);
  }, 60_000);
});
