import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { QueueName } from '@crawler/contracts';
import { MemoryStateStore } from '@crawler/state';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { FrontierService } from './frontier.service';

/** The frontier against the in-memory store, with the pipeline's sends recorded. */
function frontier(overrides: Record<string, unknown> = {}) {
  const sent: { queue: QueueName; payload: any; options?: { delayMs?: number } }[] = [];
  const pipeline = { send: async (queue: QueueName, payload: unknown, options?: { delayMs?: number }) => void sent.push({ queue, payload: payload as any, options }) } as unknown as Pipeline;
  const state = new MemoryStateStore();
  const stats = new CrawlStats(state, new Registry());
  const config = loadConfig({}, { 'frontier.minDelayMs': 1000, ...overrides });
  const logger = { debug() {} } as any;
  return { service: new FrontierService(state, config, logger, pipeline, stats), sent };
}

const url = (u: string) => ({ url: u, depth: 1, source: 'link' as const, hops: 0 });

describe('FrontierService', () => {
  it('gives an idle host one token, however many URLs arrive', async () => {
    const { service, sent } = frontier();
    await service.add([url('http://a.test/1'), url('http://a.test/2'), url('http://b.test/1')]);
    await service.add([url('http://a.test/3')]);
    expect(sent.filter((s) => s.queue === QueueName.FrontierDispatch).map((s) => s.payload.host).sort()).toEqual(['a.test', 'b.test']);
  });

  it('dispatches a host’s URLs in order, one per turn, and lets an empty host go idle', async () => {
    const { service, sent } = frontier();
    await service.add([url('http://a.test/1'), url('http://a.test/2')]);
    await service.dispatch('a.test');
    await service.dispatch('a.test');
    await service.dispatch('a.test');
    expect(sent.filter((s) => s.queue === QueueName.DnsResolve).map((s) => s.payload.url)).toEqual(['http://a.test/1', 'http://a.test/2']);
    sent.length = 0;
    await service.add([url('http://a.test/3')]);
    expect(sent.map((s) => s.queue)).toEqual([QueueName.FrontierDispatch]);
  });

  it('puts a robots-only turn’s URL back once, even when it returns before the dispatcher finished', async () => {
    const { service, sent } = frontier();
    await service.add([url('http://a.test/1'), url('http://a.test/2')]);
    await service.dispatch('a.test');
    const request = sent.find((s) => s.queue === QueueName.DnsResolve)!.payload;
    const { v, fetchId, host, ...retry } = request;
    await service.done({ v: 1, fetchId, url: request.url, host, kind: 'robots-fetched', requested: true, durationMs: 5, retry });
    await service.dispatch('a.test');
    await service.dispatch('a.test');
    await service.dispatch('a.test');
    expect(sent.filter((s) => s.queue === QueueName.DnsResolve).map((s) => s.payload.url)).toEqual(['http://a.test/1', 'http://a.test/1', 'http://a.test/2']);
  });

  it('rests the host for the politeness delay after a request', async () => {
    const { service, sent } = frontier();
    await service.done({ v: 1, fetchId: 'f', url: 'http://a.test/', host: 'a.test', kind: 'fetched', requested: true, durationMs: 10, crawlDelayMs: 3000 });
    expect(sent).toEqual([{ queue: QueueName.FrontierDispatch, payload: { v: 1, host: 'a.test' }, options: { delayMs: 3000 } }]);
  });

  it('stops dispatching when the page budget is spent', async () => {
    const { service, sent } = frontier({ 'frontier.maxPages': 1 });
    await service.add([url('http://a.test/1'), url('http://a.test/2')]);
    await service.dispatch('a.test');
    await service.dispatch('a.test');
    expect(sent.filter((s) => s.queue === QueueName.DnsResolve)).toHaveLength(1);
  });
});
