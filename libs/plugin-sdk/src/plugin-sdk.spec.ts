import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DynamicModule, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import { ConfigError, loadConfig } from '@crawler/config';
import { PluginFetched, PluginPage, pluginEventsQueue, pluginQueue, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { BODY_STAGING, BodyStaging, CONTENT_STORE, ContentStore, PAGE_STORE, PageStore } from '@crawler/content-store';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { PluginRegistry } from '@crawler/plugin-host';
import { CrawlStats, RuntimeModule } from '@crawler/runtime';
import { createLogger } from '@crawler/logging';
import { PluginContext } from './plugin-context';
import { definePlugin, pluginManifest, PluginHandler } from './plugin-definition';
import { loadPluginConfig } from './plugin-config';
import { findPlugin, installedPlugins, loadPlugins } from './plugin-loader';
import { pluginModule } from './plugin.module';

/** An example plugin with both hooks: what a plugin author writes. */
const ExampleConfig = z.object({ word: z.string().min(1).default('crawler'), limit: z.coerce.number().int().min(1).default(3) });
type ExampleConfig = z.infer<typeof ExampleConfig>;
const seen: { fetched: { job: PluginFetched; body: string }[]; pages: { page: PluginPage; text: string }[] } = { fetched: [], pages: [] };

@Injectable()
class ExampleHandler implements PluginHandler {
  constructor(private readonly ctx: PluginContext<ExampleConfig>) {}

  async onFetched(job: PluginFetched, body: Buffer) {
    seen.fetched.push({ job, body: body.toString() });
    await this.ctx.count('fetched');
  }

  async onPage(page: PluginPage) {
    const { text } = await this.ctx.pageText(page);
    seen.pages.push({ page, text });
    if (text.includes(this.ctx.config.word)) await this.ctx.emit('match', { word: this.ctx.config.word }, page.url);
  }
}

const example = definePlugin<ExampleConfig>({
  name: 'example',
  claims: (config) => ({ contentTypes: ['text/csv', 'image/*'], extensions: ['csv'], maxBytes: config.limit * 1024 }),
  pageHook: true,
  config: { schema: ExampleConfig, env: { PLUGIN_EXAMPLE_WORD: 'word', PLUGIN_EXAMPLE_LIMIT: 'limit' } },
  handler: ExampleHandler,
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('definePlugin', () => {
  it('checks the name, the settings’ names and that the handler has the hooks the plugin declares', () => {
    class NoHooks {}
    expect(() => definePlugin({ name: 'Bad_Name', handler: ExampleHandler })).toThrow(/plugin name/);
    expect(() => definePlugin({ name: 'x', handler: ExampleHandler, config: { schema: ExampleConfig, env: { WORD: 'word' } } as any })).toThrow(/PLUGIN_X_/);
    expect(() => definePlugin({ name: 'x', handler: NoHooks, claims: { extensions: ['csv'] } })).toThrow(/no onFetched/);
    expect(() => definePlugin({ name: 'x', handler: NoHooks, pageHook: true })).toThrow(/no onPage/);
  });

  it('makes the manifest a plugin registers, from its settings', () => {
    expect(pluginManifest(example, { word: 'w', limit: 2 })).toEqual({
      v: SCHEMA_VERSION,
      name: 'example',
      claims: { contentTypes: ['text/csv', 'image/*'], extensions: ['csv'], urlPatterns: [], maxBytes: 2048 },
      pageHook: true,
      queue: 'plugin.example',
    });
  });

  it('asks for referrers in the manifest only when the plugin does (a prioritizer learning where links lead)', () => {
    const learning = definePlugin({
      name: 'learning',
      pageHook: true,
      referrers: true,
      handler: ExampleHandler,
      prioritizer: () => ({ prioritize: (_urls, proposed) => [...proposed] }),
    });
    expect(pluginManifest(learning, {}).referrers).toBe(true);
    expect(pluginManifest(example, { word: 'w', limit: 2 })).not.toHaveProperty('referrers');
  });
});

describe('loadPluginConfig', () => {
  it('reads the plugin’s variables, with defaults', () => {
    expect(loadPluginConfig(example, {})).toEqual({ word: 'crawler', limit: 3 });
    expect(loadPluginConfig(example, { PLUGIN_EXAMPLE_WORD: 'bloom', PLUGIN_EXAMPLE_LIMIT: '9' })).toEqual({ word: 'bloom', limit: 9 });
  });

  it('names the bad variable and its value', () => {
    expect(() => loadPluginConfig(example, { PLUGIN_EXAMPLE_LIMIT: 'many' })).toThrow(ConfigError);
    expect(() => loadPluginConfig(example, { PLUGIN_EXAMPLE_LIMIT: '0' })).toThrow(/PLUGIN_EXAMPLE_LIMIT: .*\(got "0"\)/);
  });
});

describe('loading plugins by name (the embedded crawl)', () => {
  it('finds a plugin library by convention, libs/plugin-<name>', () => {
    expect(findPlugin('png').name).toBe('png');
    expect(loadPlugins(['png'], {})).toHaveLength(1);
  });

  it('lists the plugins present, not the SDK nor the host that runs them', () => {
    expect(installedPlugins()).toEqual(['focus', 'monitor', 'png', 'render']);
    for (const name of installedPlugins()) expect(findPlugin(name).name).toBe(name);
  });

  it('loads a plugin library nobody imports, by its name alone: a new plugin needs no edit of the crawler', () => {
    const libs = mkdtempSync(join(tmpdir(), 'plugin-libs-'));
    dirs.push(libs);
    mkdirSync(join(libs, 'plugin-echo', 'src'), { recursive: true });
    writeFileSync(
      join(libs, 'plugin-echo', 'src', 'index.ts'),
      `import { definePlugin, PluginPage } from '@crawler/plugin-sdk';
       class EchoHandler { async onPage(page: PluginPage) { void page; } }
       export const echoPlugin = definePlugin({ name: 'echo', pageHook: true, handler: EchoHandler });\n`,
    );
    expect(findPlugin('echo', libs)).toMatchObject({ name: 'echo', pageHook: true });
    expect(loadPlugins(['echo'], {}, libs)).toHaveLength(1);
  });

  it('names an unknown plugin and a bad setting of a known one', () => {
    expect(() => loadPlugins(['nope'], {})).toThrow(/PLUGINS: no plugin "nope" \(there is no libs\/plugin-nope\)/);
    expect(() => loadPlugins(['sdk'], {})).toThrow(/no plugin "sdk"/);
    expect(() => loadPlugins(['png'], { PLUGIN_PNG_MAX_BYTES: '12' })).toThrow(/PLUGIN_PNG_MAX_BYTES/);
  });
});

describe('a plugin module next to the runtime', () => {
  async function start(enabled: string[] = ['example'], plugin: DynamicModule = pluginModule(example, { word: 'bloom', limit: 1 })) {
    const dataDir = mkdtempSync(join(tmpdir(), 'plugin-sdk-'));
    dirs.push(dataDir);
    const config = loadConfig({}, { dataDir, 'plugins.enabled': enabled, logLevel: 'silent' });
    const logger = createLogger({ level: config.logLevel, service: 'test' });
    @Module({ imports: [RuntimeModule.forRoot({ service: 'test', config, logger }), plugin] })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.init();
    return {
      app,
      queues: app.get<QueueTransport>(QUEUE_TRANSPORT),
      content: app.get<ContentStore>(CONTENT_STORE),
      staging: app.get<BodyStaging>(BODY_STAGING),
      pages: app.get<PageStore>(PAGE_STORE),
      registry: app.get(PluginRegistry),
      stats: app.get(CrawlStats),
    };
  }
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  /** Lets the memory transport finish what it is running. */
  const settle = () => new Promise((r) => setTimeout(r, 100));
  const fetchedJob = (bodyKey: string): PluginFetched => ({
    v: SCHEMA_VERSION,
    hook: 'fetched',
    fetchId: 'f1',
    url: 'http://a.test/data.csv',
    depth: 1,
    status: 200,
    headers: {},
    contentType: 'text/csv',
    bodyKey,
    length: 3,
    truncated: false,
    fetchedAt: new Date().toISOString(),
    source: 'http://a.test/',
  });

  beforeEach(() => {
    seen.fetched.length = 0;
    seen.pages.length = 0;
  });

  it('registers its manifest, so core services see its claims', async () => {
    const { app, registry } = await start();
    try {
      const claims = await registry.claims();
      expect(claims.forContentType('image/gif; charset=x')?.name).toBe('example');
      expect(claims.claimsUrl('http://a.test/x.CSV')?.name).toBe('example');
      expect(claims.pageHooks.map((m) => m.name)).toEqual(['example']);
      expect((await registry.registered()).map((m) => m.claims.maxBytes)).toEqual([1024]);
    } finally {
      await app.close();
    }
  });

  it('hands a claimed response to onFetched with its body, then releases the staged body', async () => {
    const { app, queues, staging, stats } = await start();
    try {
      const ref = await staging.stage(Buffer.from('a,b'));
      await queues.add(pluginQueue('example'), fetchedJob(ref));
      await until(() => seen.fetched.length > 0);
      expect(seen.fetched).toEqual([{ job: expect.objectContaining({ url: 'http://a.test/data.csv', source: 'http://a.test/' }), body: 'a,b' }]);
      await settle();
      expect(await staging.read(ref)).toBeNull();
      expect((await stats.totals())['plugin.example.fetched']).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('hands a new page to onPage, whose text it reads from the stored page, and emits to plugin-events.<name>', async () => {
    const { app, queues, pages } = await start();
    try {
      const html = '<html><head><title>T</title></head><body><p>Bloom filters and the bloom word</p></body></html>';
      const contentKey = await pages.store(
        { codec: 'gzip', bytes: gzipSync(Buffer.from(html)) },
        {
          url: 'http://a.test/p',
          fetchedAt: '',
          status: 200,
          contentType: 'text/html',
          charset: 'utf-8',
          title: 'T',
          truncated: false,
          headers: {},
          contentHash: 'a'.repeat(64),
          simhash: '0'.repeat(16),
        },
      );
      const page: PluginPage = {
        v: SCHEMA_VERSION,
        hook: 'page',
        url: 'http://a.test/p',
        depth: 0,
        status: 200,
        fetchedAt: new Date().toISOString(),
        contentType: 'text/html; charset=utf-8',
        charset: 'utf-8',
        title: 'T',
        noindex: false,
        contentHash: 'a'.repeat(64),
        simhash: '0'.repeat(16),
        contentKey,
      };
      await queues.add(pluginQueue('example'), page);
      await until(() => seen.pages.length > 0);
      expect(seen.pages[0].text).toBe('Bloom filters and the bloom word');
      await settle();
      expect((await queues.counts(pluginEventsQueue('example'))).waiting).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('takes a claimed HTML page before the parser and hands it on: as fetched (the body kept for the parser), or replaced (staged, `via` the plugin)', async () => {
    @Injectable()
    class Rewriter implements PluginHandler {
      constructor(private readonly ctx: PluginContext) {}
      async onFetched(job: PluginFetched, body: Buffer) {
        if (job.url.endsWith('/keep')) return this.ctx.toParser(job);
        await this.ctx.toParser(job, { body: Buffer.from(body.toString().toUpperCase()), contentType: 'text/html; charset=utf-8' });
      }
    }
    const rewriter = definePlugin({ name: 'rewriter', claims: { pages: ['/app/**'] }, handler: Rewriter });
    expect(pluginManifest(rewriter, {}).claims.pages).toEqual(['/app/**']);
    const { app, queues, staging, registry } = await start(['rewriter'], pluginModule(rewriter, {}));
    const parsed: any[] = [];
    await queues.consume(QueueName.Parse, async (job) => void parsed.push(job));
    try {
      expect((await registry.claims()).claimsPage('http://a.test/app/x/y')?.name).toBe('rewriter');
      expect((await registry.claims()).claimsPage('http://a.test/other')).toBeUndefined();
      const page = (path: string, bodyKey: string): PluginFetched => ({
        ...fetchedJob(bodyKey),
        url: `http://a.test/app${path}`,
        contentType: 'text/html; charset=windows-1251',
        headers: { 'content-type': 'text/html; charset=windows-1251', 'content-length': '12' },
      });
      const kept = await staging.stage(Buffer.from('<p>kept</p>'));
      const replaced = await staging.stage(Buffer.from('<p>small</p>'));
      await queues.add(pluginQueue('rewriter'), page('/keep', kept));
      await queues.add(pluginQueue('rewriter'), page('/swap', replaced));
      await until(() => parsed.length === 2);
      await settle();
      const byUrl = Object.fromEntries(parsed.map((p) => [p.url.replace('http://a.test/app', ''), p]));
      expect(byUrl['/keep']).toMatchObject({ bodyKey: kept, contentType: 'text/html; charset=windows-1251' });
      expect(byUrl['/keep'].via).toBeUndefined();
      expect(byUrl['/keep'].hook).toBeUndefined();
      expect((await staging.read(kept))!.body.toString()).toBe('<p>kept</p>');
      expect(byUrl['/swap']).toMatchObject({
        via: 'rewriter',
        contentType: 'text/html; charset=utf-8',
        length: 12,
        headers: { 'content-type': 'text/html; charset=utf-8' },
      });
      expect(byUrl['/swap'].headers['content-length']).toBeUndefined();
      expect((await staging.read(byUrl['/swap'].bodyKey))!.body.toString()).toBe('<P>SMALL</P>');
      expect(await staging.read(replaced)).toBeNull();
    } finally {
      await app.close();
    }
  });

  it('rejects a malformed job to the dead-letter queue', async () => {
    const { app, queues } = await start();
    try {
      await queues.add(pluginQueue('example'), { hook: 'fetched', url: 'x' } as any);
      await settle();
      expect((await queues.counts(QueueName.DeadLetter)).waiting).toBe(1);
      expect(seen.fetched).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
