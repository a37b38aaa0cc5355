import { INestApplicationContext } from '@nestjs/common';
import { loadConfig } from '@crawler/config';
import { FetchRequest, QueueName } from '@crawler/contracts';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { DownloaderMembership, HashRing } from '@crawler/hash-ring';
import { QUEUE_TRANSPORT, QueueTransport } from '@crawler/queue';
import { RedisStateStore, STATE_STORE, StateStore } from '@crawler/state';
import { FrontierDispatcher } from './frontier-dispatcher.service';
import { FrontierService } from './frontier.service';
import { startFrontier } from './testing';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A downloader leaving the ring, on Redis: one that left drained has its hosts handed to the others at once;
 * one that vanished (its heartbeats stopped) costs its hosts DOWNLOADER_TOTAL_TIMEOUT_MS, the time a fetch it
 * might still be making takes to time out.
 */
describe('FrontierDispatcher: a downloader leaves the ring', () => {
  /** Short enough to see the vanished case end, far longer than the drained case may take. */
  const TOTAL_TIMEOUT_MS = 8000;
  const prefix = `test-departure-${process.pid}-${Math.random().toString(36).slice(2)}`;
  let app: INestApplicationContext;
  let queues: QueueTransport;
  let store: FrontierStore;
  let membership: DownloaderMembership;
  const beating = new Map<string, NodeJS.Timeout>();
  /** The shard of every request the dispatcher sent, in order. */
  const sent: { url: string; shard?: string }[] = [];

  const until = async (what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await sleep(50);
    }
  };
  /** Starts `id` beating; resolves once the dispatcher's ring has it, so that its hosts are sent to it. */
  const beat = async (id: string) => {
    await membership.heartbeat(id);
    beating.set(
      id,
      setInterval(() => void membership.heartbeat(id).catch(() => undefined), 200),
    );
    await until(`${id} on the dispatcher's ring`, () => (app.get(FrontierDispatcher) as any).ring.has(id), 5000);
  };
  const stopBeating = (id: string) => clearInterval(beating.get(id));
  /** A host the ring of `ids` gives to `owner`. */
  const hostOwnedBy = (owner: string, ids: string[]) => {
    const ring = new HashRing(ids);
    for (let i = 0; ; i++) if (ring.owner(`h${i}.test`) === owner) return `h${i}.test`;
  };

  beforeAll(async () => {
    // Presumed gone 3 s after its last heartbeat.
    const config = loadConfig(
      { REDIS_URL },
      { prefix, logLevel: 'silent', 'frontier.minDelayMs': 0, 'downloader.heartbeatMs': 1000, 'downloader.totalTimeoutMs': TOTAL_TIMEOUT_MS },
    );
    app = await startFrontier(config);
    queues = app.get(QUEUE_TRANSPORT);
    store = app.get(FRONTIER_STORE);
    membership = new DownloaderMembership(app.get<StateStore>(STATE_STORE).namespace('downloaders'), { heartbeatMs: 1000 });
    // Stands in for the resolver: records where each request was sent, and lets it go no further.
    await queues.consume(QueueName.DnsResolve, async (request: FetchRequest) => void sent.push({ url: request.url, shard: request.shard }));
  });

  afterAll(async () => {
    for (const timer of beating.values()) clearInterval(timer);
    await app?.close();
    const state = new RedisStateStore({ url: REDIS_URL, prefix });
    await state.clear();
    await state.close();
  });

  it('hands the hosts of a downloader that left drained to the others at once, not after DOWNLOADER_TOTAL_TIMEOUT_MS', async () => {
    await beat('dl-a');
    await beat('dl-b');
    const url = `http://${hostOwnedBy('dl-a', ['dl-a', 'dl-b'])}/`;
    await app.get(FrontierService).add([{ url, depth: 0, source: 'seed', hops: 0 }]);
    await until('the URL sent to dl-a', () => sent.some((s) => s.url === url && s.shard === 'dl-a'), 5000);
    expect((await store.counts()).leased).toBe(1);

    // dl-a drained (its request, sent to a shard it no longer reads, was never fetched) and left saying so.
    stopBeating('dl-a');
    await membership.leave('dl-a', { drained: true });
    const leftAt = Date.now();
    await until('the URL sent again, to dl-b', () => sent.some((s) => s.url === url && s.shard === 'dl-b'), TOTAL_TIMEOUT_MS);
    expect(Date.now() - leftAt).toBeLessThan(3000);
  }, 20_000);

  it('makes the hosts of a downloader that vanished wait DOWNLOADER_TOTAL_TIMEOUT_MS: a fetch of its may still be under way', async () => {
    await beat('dl-c');
    const url = `http://${hostOwnedBy('dl-c', ['dl-b', 'dl-c'])}/`;
    await app.get(FrontierService).add([{ url, depth: 0, source: 'seed', hops: 0 }]);
    await until('the URL sent to dl-c', () => sent.some((s) => s.url === url && s.shard === 'dl-c'), 5000);

    // dl-c stops beating without a word: gone once its heartbeat has expired, its lease ended then.
    const leased = (await store.counts()).leased;
    stopBeating('dl-c');
    const silentAt = Date.now();
    await until('the lease of dl-c reclaimed', async () => (await store.counts()).leased === leased - 1, 8000);
    const reclaimedAt = Date.now();
    await until('the URL sent again, to dl-b', () => sent.some((s) => s.url === url && s.shard === 'dl-b'), TOTAL_TIMEOUT_MS + 5000);
    expect(Date.now() - reclaimedAt).toBeGreaterThanOrEqual(TOTAL_TIMEOUT_MS - 1500);
    expect(Date.now() - silentAt).toBeGreaterThanOrEqual(TOTAL_TIMEOUT_MS);
  }, 30_000);
});
