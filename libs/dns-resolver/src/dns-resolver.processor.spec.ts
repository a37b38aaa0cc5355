import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { FetchRequest, QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { UnreachedHostsRegistry } from '@crawler/crawl-state';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { DnsResolverProcessor } from './dns-resolver.processor';
import { Resolution } from '@crawler/net';
import { DnsResolverService } from './dns-resolver.service';

async function setup(resolution: Resolution) {
  const sent: { queue: string; payload: any }[] = [];
  let handler!: (request: FetchRequest) => Promise<void>;
  const pipeline = {
    consume: async (_q: QueueName, h: (request: FetchRequest) => Promise<void>) => void (handler = h),
    send: async (queue: string, payload: unknown) => void sent.push({ queue, payload }),
  } as unknown as Pipeline;
  const config = loadConfig({}, { 'dns.failureTtlMs': 7000 });
  const state = new MemoryStateStore();
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const resolver = { resolve: async () => resolution } as unknown as DnsResolverService;
  const unreached = new UnreachedHostsRegistry(state, config);
  await new DnsResolverProcessor(pipeline, resolver, stats, unreached, config, pino({ enabled: false })).onApplicationBootstrap();
  const request: FetchRequest = {
    v: SCHEMA_VERSION,
    url: 'http://a.test/p',
    depth: 2,
    source: 'link',
    hops: 0,
    attempts: 1,
    leaseId: 'l1',
    fetchId: 'f1',
    host: 'a.test',
    shard: 'd1',
  };
  await handler(request);
  return { sent, totals: await stats.totals(), unreached };
}

describe('DnsResolverProcessor', () => {
  it('sends a resolved URL to the fetch shard of the downloader that owns its host, with the vetted address', async () => {
    const { sent } = await setup({ ok: true, address: '93.184.216.34', source: 'dns' });
    expect(sent).toEqual([{ queue: 'fetch.d1', payload: expect.objectContaining({ url: 'http://a.test/p', ip: '93.184.216.34' }) }]);
  });

  it("passes the host's other vetted addresses on, for the downloader to fall back to", async () => {
    const { sent } = await setup({ ok: true, address: '93.184.216.34', fallbacks: ['93.184.216.35', '2001:db8::1'], source: 'dns' });
    expect(sent[0].payload).toMatchObject({ ip: '93.184.216.34', fallbackIps: ['93.184.216.35', '2001:db8::1'] });
    expect(FetchRequest.safeParse(sent[0].payload).success).toBe(true);
  });

  it('defers the host when the failure may pass, keeping the URL for another turn', async () => {
    const { sent, totals } = await setup({ ok: false, error: 'DNS lookup of a.test failed: ETIMEOUT', transient: true });
    expect(sent).toEqual([
      {
        queue: QueueName.FrontierDone,
        payload: expect.objectContaining({
          kind: 'deferred',
          cause: 'dns',
          requested: false,
          retryAfterMs: 7000,
          leaseId: 'l1',
          retry: expect.objectContaining({ url: 'http://a.test/p', depth: 2, attempts: 1 }),
        }),
      },
    ]);
    expect(totals).toEqual({ 'deferred.dns': 1 });
  });

  it('drops a URL whose name does not exist or is refused', async () => {
    const { sent, totals } = await setup({ ok: false, error: 'DNS lookup of a.test failed: ENOTFOUND', transient: false });
    expect(sent).toEqual([{ queue: QueueName.FrontierDone, payload: expect.objectContaining({ kind: 'error', requested: false }) }]);
    expect(sent[0].payload.retry).toBeUndefined();
    expect(totals).toEqual({ 'error.dns': 1 });
  });

  it('tells a refused address from a failed lookup, and keeps each host with its first error for the summary', async () => {
    const refusal = 'address 127.0.0.1 is not public: it is loopback (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)';
    const refused = await setup({ ok: false, error: refusal, transient: false, refused: true });
    expect(refused.totals).toEqual({ 'error.address-refused': 1 });
    expect(await refused.unreached.read('address-refused')).toEqual({ hosts: 1, first: [{ host: 'a.test', error: refusal }] });
    expect(await refused.unreached.read('dns-failed')).toEqual({ hosts: 0, first: [] });
    const failed = await setup({ ok: false, error: 'DNS lookup of a.test failed: ENOTFOUND', transient: false });
    expect(await failed.unreached.read('dns-failed')).toEqual({ hosts: 1, first: [{ host: 'a.test', error: 'DNS lookup of a.test failed: ENOTFOUND' }] });
  });
});
