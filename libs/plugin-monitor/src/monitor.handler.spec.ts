import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { PluginPage, pluginEventsQueue, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore, MemoryBodyStaging, SegmentedPageStore } from '@crawler/content-store';
import { loadPluginConfig, PluginContext } from '@crawler/plugin-sdk';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { MONITOR_CONFIG } from './monitor.config';
import { alertIdOf, MonitorAlert, MonitorPluginHandler } from './monitor.handler';
import { monitorPlugin } from './monitor.plugin';

/** A webhook on 127.0.0.1 that records each POST and answers `status()` (500 to simulate an outage). */
class Webhook {
  readonly calls: MonitorAlert[] = [];
  status = 200;
  private constructor(private readonly server: Server) {}
  static async start(): Promise<Webhook> {
    const server = createServer();
    const hook = new Webhook(server);
    server.on('request', async (req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (hook.status === 200) hook.calls.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(hook.status).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return hook;
  }
  get url() {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const dirs: string[] = [];
let webhook: Webhook;
beforeAll(async () => {
  webhook = await Webhook.start();
});
beforeEach(() => {
  webhook.calls.length = 0;
  webhook.status = 200;
});
afterAll(async () => {
  await webhook.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function setup(env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-monitor-'));
  dirs.push(dir);
  const state = new MemoryStateStore();
  const content = new FsContentStore(join(dir, 'content'));
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const events: { queue: string; payload: any }[] = [];
  const pipeline = { send: async (queue: string, payload: unknown) => void events.push({ queue, payload }) } as unknown as Pipeline;
  const crawler = loadConfig({}, { 'plugins.enabled': ['monitor'], dataDir: dir });
  const config = loadPluginConfig(monitorPlugin, { PLUGIN_MONITOR_WEBHOOK_TIMEOUT_MS: '2000', ...env });
  const pages = new SegmentedPageStore(content, { maxPages: 1 });
  const ctx = new PluginContext('monitor', config, crawler, state, content, pages, new Registry(), pipeline, stats, pino({ enabled: false }), new MemoryBodyStaging());
  const jsonl = join(dir, 'plugin-monitor', 'alerts.jsonl');
  const lines = (): MonitorAlert[] =>
    existsSync(jsonl)
      ? readFileSync(jsonl, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  /** Stores `html` as the crawler does (gzip, in the page store) and answers the PluginPage of it. */
  const page = async (url: string, html: string | Buffer, charset = 'utf-8'): Promise<PluginPage> => {
    const contentHash = createHash('sha256').update(html).digest('hex');
    const contentKey = await pages.store(
      { codec: 'gzip', bytes: gzipSync(Buffer.from(html)) },
      {
        url,
        fetchedAt: '',
        status: 200,
        contentType: 'text/html',
        charset,
        title: '',
        truncated: false,
        headers: {},
        contentHash,
        simhash: '0123456789abcdef',
      },
    );
    return {
      v: SCHEMA_VERSION,
      hook: 'page',
      url,
      depth: 0,
      status: 200,
      fetchedAt: '2025-01-01T00:00:00.000Z',
      contentType: 'text/html',
      charset,
      noindex: false,
      contentHash,
      simhash: '0123456789abcdef',
      contentKey,
    };
  };
  return { handler: new MonitorPluginHandler(ctx), ctx, stats, events, lines, page, jsonl };
}

const html = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><p>${body}</p></body></html>`;

describe('MonitorPluginHandler', () => {
  it('raises one alert per term found: the queue event, a JSONL line and a webhook call, with URL and snippet', async () => {
    const { handler, stats, events, lines, page } = setup({
      PLUGIN_MONITOR_TERMS: 'acme,absent',
      PLUGIN_MONITOR_PATTERNS: '["widget-\\\\d+"]',
      PLUGIN_MONITOR_WEBHOOK_URL: webhook.url,
    });
    const p = await page('http://a.test/news', html('News', `Lorem ipsum ${'filler '.repeat(20)}the ACME widget-42 is here ${'tail '.repeat(20)}`));
    await handler.onPage(p);
    expect(lines().map((l) => [l.url, l.term, l.kind, l.matched])).toEqual([
      ['http://a.test/news', 'acme', 'term', 'ACME'],
      ['http://a.test/news', 'widget-\\d+', 'pattern', 'widget-42'],
    ]);
    const [alert] = lines();
    expect(alert).toMatchObject({ id: alertIdOf(p.url, p.contentHash, 'acme'), title: 'News', contentHash: p.contentHash, plugin: 'monitor' });
    expect(alert.snippet).toMatch(/^…(filler )+the ACME widget-42 is here (tail )+t[a-z]*…$/);
    expect(alert.snippet.length).toBe(1 + 60 + 'ACME'.length + 60 + 1); // ±60 characters, and the two marks of a cut
    expect(webhook.calls).toEqual(lines());
    expect(events.map((e) => [e.queue, e.payload.type, e.payload.url, e.payload.data.term, e.payload.data.title])).toEqual([
      [pluginEventsQueue('monitor'), 'alert', p.url, 'acme', 'News'],
      [pluginEventsQueue('monitor'), 'alert', p.url, 'widget-\\d+', 'News'],
    ]);
    expect(events[0].payload.data.snippet).toBe(alert.snippet);
    expect((await stats.totals())['plugin.monitor.alerts']).toBe(2);
  });

  it('raises nothing for a page without a match, nor when nothing is watched', async () => {
    const { handler, events, lines, page } = setup({ PLUGIN_MONITOR_TERMS: 'acme' });
    await handler.onPage(await page('http://a.test/', html('Home', 'acmeish subacme nothing here')));
    expect([lines(), events]).toEqual([[], []]);
    const idle = setup();
    await idle.handler.onPage(await idle.page('http://a.test/', html('Acme', 'acme')));
    expect([idle.lines(), idle.events]).toEqual([[], []]);
  });

  it('matches the title too, and a windows-1251 page decoded in its charset', async () => {
    const { handler, lines, page } = setup({ PLUGIN_MONITOR_TERMS: 'съешь,Headline' });
    const cp1251 = Buffer.from([0xd1, 0xfa, 0xe5, 0xf8, 0xfc, 0x20, 0xe6, 0xe5]); // "Съешь же"
    const p = await page(
      'http://a.test/ru',
      Buffer.concat([Buffer.from('<html><head><title>Headline</title></head><body><p>'), cp1251, Buffer.from('</p></body></html>')]),
    );
    await handler.onPage({ ...p, charset: 'windows-1251' });
    expect(lines().map((l) => [l.term, l.matched, l.snippet])).toEqual([
      ['съешь', 'Съешь', 'Headline Съешь же'],
      ['Headline', 'Headline', 'Headline Съешь же'],
    ]);
  });

  it('once per page version: a redelivery or an unchanged recrawl raises nothing; a changed page alerts again', async () => {
    const { handler, stats, events, lines, page } = setup({ PLUGIN_MONITOR_TERMS: 'acme', PLUGIN_MONITOR_WEBHOOK_URL: webhook.url });
    const v1 = await page('http://a.test/p', html('P', 'acme version one'));
    await handler.onPage(v1);
    await handler.onPage(v1); // redelivered
    await handler.onPage(await page('http://a.test/p', html('P', 'acme version one'))); // recrawled, unchanged: same contentHash
    expect([lines().length, events.length, webhook.calls.length]).toEqual([1, 1, 1]);
    const v2 = await page('http://a.test/p', html('P', 'acme version two'));
    await handler.onPage(v2);
    expect(lines().map((l) => l.contentHash)).toEqual([v1.contentHash, v2.contentHash]);
    expect([events.length, webhook.calls.length]).toEqual([2, 2]);
    // The same text at another URL is another page: its own alert.
    await handler.onPage({ ...v1, url: 'http://b.test/copy' });
    expect(lines().map((l) => l.url)).toEqual(['http://a.test/p', 'http://a.test/p', 'http://b.test/copy']);
    expect((await stats.totals())['plugin.monitor.alerts']).toBe(3);
  });

  it('a failed webhook fails the job; the retry calls the webhook again without a second JSONL line or event', async () => {
    const { handler, stats, events, lines, page } = setup({ PLUGIN_MONITOR_TERMS: 'acme,beta', PLUGIN_MONITOR_WEBHOOK_URL: webhook.url });
    const p = await page('http://a.test/down', html('Down', 'acme and beta'));
    webhook.status = 503;
    await expect(handler.onPage(p)).rejects.toThrow(/webhook .* answered 503/);
    await expect(handler.onPage(p)).rejects.toThrow(/answered 503/); // still down: the retry fails too
    expect(lines()).toHaveLength(2); // written once, at the first attempt, not lost
    expect(events).toHaveLength(2);
    expect(webhook.calls).toEqual([]);
    expect((await stats.totals())['plugin.monitor.alerts']).toBeUndefined(); // not recorded: not done
    webhook.status = 200;
    await handler.onPage(p); // the retry that succeeds
    expect(lines()).toHaveLength(2);
    expect(events).toHaveLength(2);
    expect(webhook.calls).toEqual(lines()); // the very alerts of the JSONL (same id, same `at`)
    await handler.onPage(p); // and then it is done
    expect([lines().length, events.length, webhook.calls.length]).toEqual([2, 2, 2]);
    expect((await stats.totals())['plugin.monitor.alerts']).toBe(2);
  });

  it('a webhook that does not answer in time fails the job, and one that is unreachable too', async () => {
    const slow = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const port = (slow.address() as AddressInfo).port;
      const { handler, lines, page } = setup({
        PLUGIN_MONITOR_TERMS: 'acme',
        PLUGIN_MONITOR_WEBHOOK_URL: `http://127.0.0.1:${port}/`,
        PLUGIN_MONITOR_WEBHOOK_TIMEOUT_MS: '200',
      });
      const p = await page('http://a.test/slow', html('S', 'acme'));
      const started = Date.now();
      await expect(handler.onPage(p)).rejects.toThrow(/webhook .* failed/);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(lines()).toHaveLength(1);
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
    const { handler, page } = setup({ PLUGIN_MONITOR_TERMS: 'acme', PLUGIN_MONITOR_WEBHOOK_URL: 'http://127.0.0.1:1/' });
    await expect(handler.onPage(await page('http://a.test/x', html('X', 'acme')))).rejects.toThrow(/webhook .* failed/);
  });

  it('a failed JSONL write fails the job before anything else is sent or recorded', async () => {
    const blocker = join(mkdtempSync(join(tmpdir(), 'plugin-monitor-')), 'a-file');
    dirs.push(dirname(blocker));
    writeFileSync(blocker, '');
    const { handler, events, page, ctx } = setup({ PLUGIN_MONITOR_TERMS: 'acme', PLUGIN_MONITOR_JSONL_FILE: join(blocker, 'alerts.jsonl') });
    await expect(handler.onPage(await page('http://a.test/', html('A', 'acme')))).rejects.toThrow();
    expect(events).toEqual([]);
    expect(await ctx.state.hashGetAll('alerted')).toEqual({});
    expect(await ctx.state.hashGetAll('progress')).toEqual({});
  });

  it('two deliveries of one page at once: one raises, the other is told to retry', async () => {
    const { handler, lines, page } = setup({ PLUGIN_MONITOR_TERMS: 'acme', PLUGIN_MONITOR_WEBHOOK_URL: webhook.url });
    const p = await page('http://a.test/twice', html('T', 'acme'));
    const results = await Promise.allSettled([handler.onPage(p), handler.onPage(p)]);
    expect(results.filter((r) => r.status === 'rejected').length).toBeLessThanOrEqual(1);
    await handler.onPage(p); // the retry
    expect([lines().length, webhook.calls.length]).toEqual([1, 1]);
  });

  it('documents every setting in docs/configuration.md', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/configuration.md'), 'utf8');
    expect(Object.keys(MONITOR_CONFIG.env).filter((name) => !doc.includes(`| \`${name}\` |`))).toEqual([]);
  });
});
