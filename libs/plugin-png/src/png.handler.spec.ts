import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { PluginFetched, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore, MemoryBodyStaging, SegmentedPageStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { loadPluginConfig, PluginContext } from '@crawler/plugin-sdk';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { PNG_CONFIG } from './png.config';
import { pngPlugin } from './png.plugin';
import { imageKeyOf, PngPluginHandler } from './png.handler';
import { crc32, PNG_SIGNATURE } from './png-validator';

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function png(width: number, height: number, fill = 0x33): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 3 + 1) * height, fill);
  for (let y = 0; y < height; y++) raw[y * (width * 3 + 1)] = 0;
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function setup(env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-png-'));
  dirs.push(dir);
  const state = new MemoryStateStore();
  const content = new FsContentStore(dir);
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const crawler = loadConfig({}, { 'plugins.enabled': ['png'] });
  const ctx = new PluginContext(
    'png',
    loadPluginConfig(pngPlugin, env),
    crawler,
    state,
    content,
    new SegmentedPageStore(content),
    new Registry(),
    {} as Pipeline,
    stats,
    pino({ enabled: false }),
    new MemoryBodyStaging(),
  );
  return { handler: new PngPluginHandler(ctx), ctx, content, stats };
}

let n = 0;
const job = (url: string, body: Buffer, extra: Partial<PluginFetched> = {}): PluginFetched => ({
  v: SCHEMA_VERSION,
  hook: 'fetched',
  fetchId: `f${++n}`,
  url,
  depth: 1,
  status: 200,
  headers: { 'content-type': 'image/png' },
  contentType: 'image/png',
  bodyKey: `staging/f${n}`,
  length: body.length,
  truncated: false,
  fetchedAt: '2025-01-01T00:00:00.000Z',
  source: 'http://a.test/gallery',
  ...extra,
});

describe('PngPluginHandler', () => {
  it('stores a valid PNG content-addressed, with its dimensions, bit depth, colour type and source page', async () => {
    const { handler, ctx, content, stats } = setup();
    const image = png(40, 30);
    await handler.onFetched(job('http://a.test/photo.png', image), image);
    const [key] = await collectKeys(content.list('images/'));
    expect(key).toMatch(/^images\/[0-9a-f]{2}\/[0-9a-f]{64}\.png$/);
    const stored = (await content.get(key))!;
    expect(stored.body).toEqual(image);
    expect(stored.meta).toMatchObject({
      width: '40',
      height: '30',
      bitDepth: '8',
      colorType: '2',
      colorTypeName: 'truecolor',
      url: 'http://a.test/photo.png',
      sourcePage: 'http://a.test/gallery',
      contentType: 'image/png',
    });
    expect(key).toBe(imageKeyOf(stored.meta.sha256));
    expect(JSON.parse((await ctx.state.hashGet('images', 'http://a.test/photo.png'))!)).toMatchObject({ width: 40, height: 30, key });
    expect((await stats.totals())['plugin.png.stored']).toBe(1);
  });

  it('stores the same bytes once, recording the second URL against the first', async () => {
    const { handler, ctx, content, stats } = setup();
    const image = png(8, 8);
    await handler.onFetched(job('http://a.test/a.png', image), image);
    await handler.onFetched(job('http://b.test/copy.png', image), image);
    await handler.onFetched(job('http://a.test/a.png', image), image); // a redelivery: still the owner, stored again in place
    expect(await collectKeys(content.list('images/'))).toHaveLength(1);
    expect(JSON.parse((await ctx.state.hashGet('duplicates', 'http://b.test/copy.png'))!)).toMatchObject({ original: 'http://a.test/a.png' });
    expect(await stats.totals()).toMatchObject({ 'plugin.png.stored': 2, 'plugin.png.duplicate': 1 });
  });

  it('rejects a corrupt PNG with its reason, and stores nothing', async () => {
    const { handler, ctx, content, stats } = setup();
    const corrupt = png(8, 8);
    corrupt[8 + 8 + 4] ^= 0xff; // the height: IHDR's CRC no longer matches
    await handler.onFetched(job('http://a.test/broken.png', corrupt), corrupt);
    expect(await collectKeys(content.list('images/'))).toEqual([]);
    expect(JSON.parse((await ctx.state.hashGet('rejected', 'http://a.test/broken.png'))!)).toMatchObject({ reason: 'bad-ihdr-crc', sourcePage: 'http://a.test/gallery' });
    expect((await stats.totals())['plugin.png.rejected.bad-ihdr-crc']).toBe(1);
  });

  it('rejects a PNG cut at the size limit as too large, and one of too many pixels', async () => {
    const { handler, stats } = setup({ PLUGIN_PNG_MAX_PIXELS: '100' });
    const image = png(20, 20);
    await handler.onFetched(job('http://a.test/huge.png', image, { truncated: true }), image.subarray(0, 40));
    await handler.onFetched(job('http://a.test/wide.png', image), image);
    expect(await stats.totals()).toMatchObject({ 'plugin.png.rejected.too-large': 1, 'plugin.png.rejected.too-many-pixels': 1 });
  });

  it('keeps a long URL’s metadata in a sidecar (S3 caps object metadata at 2 KB)', async () => {
    const { handler, content } = setup();
    const image = png(2, 2);
    const url = `http://a.test/${'x'.repeat(2000)}.png`;
    await handler.onFetched(job(url, image), image);
    const keys = await collectKeys(content.list('images/'));
    const sidecar = keys.find((k) => k.endsWith('.meta.json'))!;
    const stored = (await content.get(keys.find((k) => k.endsWith('.png'))!))!;
    expect(stored.meta).toMatchObject({ width: '2', height: '2', metadata: sidecar });
    expect(JSON.parse((await content.get(sidecar))!.body.toString())).toMatchObject({ url, width: 2 });
  });

  it('claims image/png and .png, read up to PLUGIN_PNG_MAX_BYTES', () => {
    expect(loadPluginConfig(pngPlugin, { PLUGIN_PNG_MAX_BYTES: '2048' })).toMatchObject({ maxBytes: 2048 });
    expect(() => loadPluginConfig(pngPlugin, { PLUGIN_PNG_MAX_BYTES: '1' })).toThrow(/PLUGIN_PNG_MAX_BYTES/);
  });

  it('documents every setting in docs/configuration.md', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/configuration.md'), 'utf8');
    expect(Object.keys(PNG_CONFIG.env).filter((name) => !doc.includes(`| \`${name}\` |`))).toEqual([]);
  });
});
