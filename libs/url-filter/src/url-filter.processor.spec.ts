import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { CrawlUrl, QueueName, SCHEMA_VERSION, UrlBatch } from '@crawler/contracts';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import type { Logger } from '@crawler/logging';
import { noPlugins } from '@crawler/plugin-host/testing';
import { UrlFilterProcessor } from './url-filter.processor';
import { UrlFilterService } from './url-filter.service';

const quietLogger = () => ({ info: jest.fn(), warn: jest.fn(), error: jest.fn() }) as unknown as Logger;
const link = (path: string): CrawlUrl => ({ url: `http://a.test${path}`, depth: 1, source: 'link', hops: 0 });
const batch = (...paths: string[]): UrlBatch => ({ v: SCHEMA_VERSION, urls: paths.map(link) });

describe('UrlFilterProcessor', () => {
  it('sends a batch whose first send failed again whole on its retry, and only then takes its links for repeats', async () => {
    const state = new MemoryStateStore();
    const config = loadConfig({}, { 'filter.scope': 'any' });
    const sent: UrlBatch[] = [];
    let failures = 1;
    let handler!: (batch: UrlBatch) => Promise<void>;
    const pipeline = {
      consume: async (_queue: QueueName, h: (batch: UrlBatch) => Promise<void>) => void (handler = h),
      send: async (_queue: QueueName, payload: UrlBatch) => {
        if (failures-- > 0) throw new Error('Connection is closed.');
        sent.push(payload);
      },
    } as unknown as Pipeline;
    const filter = new UrlFilterService(state, config, quietLogger(), noPlugins());
    await new UrlFilterProcessor(pipeline, filter, new CrawlStats(state, new Registry(), loadConfig({})), config).onApplicationBootstrap();

    await expect(handler(batch('/a', '/b'))).rejects.toThrow('Connection is closed.');
    await handler(batch('/a', '/b')); // the queue's retry
    await handler(batch('/a', '/c'));
    expect(sent.map((b) => b.urls.map((u) => u.url))).toEqual([['http://a.test/a', 'http://a.test/b'], ['http://a.test/c']]);
  });

  it('gives every batch it sends an id of its own, even two batches of the same URLs', async () => {
    const state = new MemoryStateStore();
    const config = loadConfig({}, { 'filter.scope': 'any', 'filter.recentUrls': 0 });
    const sent: UrlBatch[] = [];
    let handler!: (batch: UrlBatch) => Promise<void>;
    const pipeline = {
      consume: async (_queue: QueueName, h: (batch: UrlBatch) => Promise<void>) => void (handler = h),
      send: async (_queue: QueueName, payload: UrlBatch) => void sent.push(payload),
    } as unknown as Pipeline;
    await new UrlFilterProcessor(
      pipeline,
      new UrlFilterService(state, config, quietLogger(), noPlugins()),
      new CrawlStats(state, new Registry(), loadConfig({})),
      config,
    ).onApplicationBootstrap();
    const redirect: UrlBatch = { v: SCHEMA_VERSION, urls: [{ url: 'http://a.test/login', depth: 1, source: 'redirect', hops: 1 }] };
    await handler(redirect);
    await handler(redirect);
    expect(sent).toHaveLength(2);
    expect(UrlBatch.parse(sent[0]).batchId).toMatch(/^[A-Za-z0-9_-]{16}-0$/); // a random prefix of this process, then the count
    expect(sent[1].batchId).not.toBe(sent[0].batchId);
  });
});
