import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { PluginFetched, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore, MemoryBodyStaging, SegmentedPageStore } from '@crawler/content-store';
import { PluginRegistry } from '@crawler/plugin-host';
import { CrawlStats, Pipeline } from '@crawler/runtime';
import { MemoryStateStore } from '@crawler/state';
import { PluginContext } from './plugin-context';
import { PluginHost } from './plugin-host.service';

describe('PluginHost, a claimed response', () => {
  async function host() {
    const state = new MemoryStateStore();
    const stats = new CrawlStats(state, new Registry(), loadConfig({}));
    const staging = new MemoryBodyStaging();
    const crawler = loadConfig({}, { 'plugins.enabled': ['probe'] });
    const content = new FsContentStore('/tmp/plugin-host-spec');
    const pipeline = { send: async () => undefined } as unknown as Pipeline;
    const context = new PluginContext(
      'probe',
      {},
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
    const seen: string[] = [];
    const handler = { onFetched: async (job: PluginFetched) => void seen.push(job.url) };
    const manifest = { name: 'probe', queue: 'plugin.probe' } as never;
    const plugin = new PluginHost(manifest, handler, context as PluginContext<unknown>, {} as PluginRegistry, pipeline, crawler, 1, staging);
    const job = async (): Promise<PluginFetched> => ({
      v: SCHEMA_VERSION,
      hook: 'fetched',
      fetchId: 'f1',
      url: 'http://a.test/x.png',
      depth: 0,
      status: 200,
      headers: {},
      contentType: 'image/png',
      bodyKey: await staging.stage(Buffer.from('png')),
      length: 3,
      truncated: false,
      fetchedAt: '2026-01-01T00:00:00.000Z',
    });
    return { plugin, job, seen, staging, stats };
  }

  it('hands it to the handler once and releases its body; a redelivery after that is skipped and counted, not failed', async () => {
    const { plugin, job, seen, staging, stats } = await host();
    const fetched = await job();
    await plugin.handle(fetched);
    expect(seen).toEqual(['http://a.test/x.png']);
    expect(await staging.read(fetched.bodyKey)).toBeNull();
    await expect(plugin.handle(fetched)).resolves.toBeUndefined();
    expect(seen).toHaveLength(1);
    expect((await stats.totals())['plugin.probe.skipped.staged-body-gone']).toBe(1);
  });
});
