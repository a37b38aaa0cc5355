import * as nodeDns from 'node:dns';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@crawler/config';
import { DnsResolverMetrics, DnsResolverService } from '@crawler/dns-resolver';
import { CrawlStats } from '@crawler/runtime';
import { MemoryStateStore, RedisStateStore, StateStore } from '@crawler/state';
import { REDIS_URL } from '../support/redis-prefix';
import { TestDnsServer } from './test-dns-server';

/**
 * The resolver against a real DNS server: the test server on 127.0.0.1, reached through DNS_SERVERS. No
 * query goes anywhere else: the system resolver is replaced by one that fails the test if it is used.
 * Cache expiry is driven by a frozen Date.now where a test says `clock()` (the memory store expires keys by
 * it), so TTL boundaries are exact; the DNS traffic itself is real.
 */
const PUBLIC = '93.184.216.34';
const PUBLIC_2 = '93.184.216.35';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';

let server: TestDnsServer;
const services: DnsResolverService[] = [];

beforeEach(async () => {
  server = await TestDnsServer.start();
  const systemResolverUsed = () => Promise.reject(new Error('the system resolver was used: only the test DNS server may be asked'));
  jest.spyOn(nodeDns.promises, 'resolve4').mockImplementation(systemResolverUsed);
  jest.spyOn(nodeDns.promises, 'resolve6').mockImplementation(systemResolverUsed);
});

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.idle()));
  jest.restoreAllMocks();
  await server.close();
});

/** A resolver asking only the test server; min TTL 50 ms, max 300 ms, failures 100 ms, no refresh-ahead unless asked, 10 s a try. */
function resolver(env: Record<string, string> = {}, state: StateStore = new MemoryStateStore()) {
  const config = loadConfig({
    DNS_SERVERS: server.address,
    DNS_MIN_TTL_MS: '50',
    DNS_MAX_TTL_MS: '300',
    DNS_FAILURE_TTL_MS: '100',
    DNS_REFRESH_AHEAD_RATIO: '0',
    // Long enough that a loaded machine's slow answer is never asked again (the log counts every query).
    DNS_TIMEOUT_MS: '10000',
    ...env,
  });
  expect(config.dns.servers).toEqual([server.address]);
  expect(config.dns.servers.every((s) => s.startsWith('127.0.0.1:'))).toBe(true);
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  const service = new DnsResolverService(state, config, stats, pino({ level: 'silent' }), new DnsResolverMetrics(new Registry()));
  services.push(service);
  return { service, stats, cache: state.namespace('dns') };
}

/** Freezes Date.now; advance it with `time.now += ms`. */
function clock() {
  const time = { now: Date.now() };
  jest.spyOn(Date, 'now').mockImplementation(() => time.now);
  return time;
}

describe('DnsResolverService against a DNS server (DNS_SERVERS=127.0.0.1:<port>)', () => {
  it('answers from the server, then from the cache', async () => {
    server.set('site.test', PUBLIC, 60);
    const { service } = resolver();
    expect(await service.resolve('Site.Test')).toEqual({ ok: true, address: PUBLIC, source: 'dns' });
    expect(await service.resolve('site.test')).toEqual({ ok: true, address: PUBLIC, source: 'cache' });
    expect(server.log).toEqual([
      { name: 'site.test', type: 'A' },
      { name: 'site.test', type: 'AAAA' },
    ]);
  });

  it('asks for AAAA after A, and answers an IPv6-only name with its AAAA record', async () => {
    server.set('six.test', PUBLIC_V6, 60);
    const { service } = resolver();
    expect(await service.resolve('six.test')).toEqual({ ok: true, address: PUBLIC_V6, source: 'dns' });
    expect(server.log).toEqual([
      { name: 'six.test', type: 'A' },
      { name: 'six.test', type: 'AAAA' },
    ]);
  });

  it('honours the TTL, clamped to [DNS_MIN_TTL_MS, DNS_MAX_TTL_MS]', async () => {
    const time = clock();
    const start = time.now;
    server.set('zero.test', PUBLIC, 0); // 0 s → raised to 50 ms
    server.set('hour.test', PUBLIC, 3600); // 1 h → cut to 300 ms
    const { service } = resolver();
    const wide = resolver({ DNS_MAX_TTL_MS: '60000' }).service;
    server.set('second.test', PUBLIC, 1); // 1 s, inside [50 ms, 60 s]: kept as given

    for (const name of ['zero.test', 'hour.test']) await service.resolve(name);
    await wide.resolve('second.test');
    const sources = async () => [
      (await service.resolve('zero.test')).ok && server.queries('zero.test'),
      (await service.resolve('hour.test')).ok && server.queries('hour.test'),
      (await wide.resolve('second.test')).ok && server.queries('second.test'),
    ];
    time.now = start + 49;
    expect(await sources()).toEqual([1, 1, 1]);
    time.now = start + 51;
    expect(await sources()).toEqual([2, 1, 1]); // zero.test looked up again, cached anew until +101
    time.now = start + 299;
    expect(await sources()).toEqual([3, 1, 1]);
    time.now = start + 301;
    expect(await sources()).toEqual([3, 2, 1]);
    time.now = start + 999;
    expect(await sources()).toEqual([4, 3, 1]);
    time.now = start + 1001;
    expect(await sources()).toEqual([4, 3, 2]);
  });

  it('caches NXDOMAIN for DNS_FAILURE_TTL_MS and reports it', async () => {
    const time = clock();
    const { service, stats } = resolver();
    // The name does not exist: not worth trying again soon (the URL is dropped, not deferred).
    const failure = { ok: false, error: 'DNS lookup of nowhere.test failed: ENOTFOUND', transient: false };
    expect(await service.resolve('nowhere.test')).toEqual(failure);
    time.now += 99;
    server.set('nowhere.test', PUBLIC, 60); // the name appears, but the failure is still cached
    expect(await service.resolve('nowhere.test')).toEqual(failure);
    expect(server.log).toEqual([{ name: 'nowhere.test', type: 'A' }]); // NXDOMAIN: no AAAA query either
    time.now += 2;
    expect(await service.resolve('nowhere.test')).toEqual({ ok: true, address: PUBLIC, source: 'dns' });
    expect(await stats.totals()).toEqual({ 'dns.cache-miss': 2, 'dns.cache-hit': 1, 'dns.failure': 1 });
  });

  it('collapses concurrent lookups of one name into one query at the server', async () => {
    server.set('busy.test', PUBLIC, 60);
    server.set('other.test', PUBLIC_2, 60);
    server.delayMs = 100;
    const { service } = resolver();
    const names = [...Array(20).fill('busy.test'), ...Array(5).fill('OTHER.test')];
    const results = await Promise.all(names.map((name) => service.resolve(name)));
    expect(results.slice(0, 20).every((r) => r.ok && r.address === PUBLIC)).toBe(true);
    expect(results.slice(20).every((r) => r.ok && r.address === PUBLIC_2)).toBe(true);
    expect(server.queries('busy.test')).toBe(1);
    expect(server.queries('other.test')).toBe(1);
  });

  it('uses an answer until its TTL runs out, then the new one, vetting every answer (DNS rebinding)', async () => {
    const time = clock();
    server.set('flip.test', PUBLIC, 3600); // cached 300 ms
    const { service } = resolver();
    const allowing = resolver({ DNS_ALLOW_CIDRS: '127.0.0.0/8' }).service;
    expect(await service.resolve('flip.test')).toEqual({ ok: true, address: PUBLIC, source: 'dns' });

    server.set('flip.test', PUBLIC_2, 3600);
    time.now += 299;
    expect(await service.resolve('flip.test')).toEqual({ ok: true, address: PUBLIC, source: 'cache' });
    time.now += 2;
    expect(await service.resolve('flip.test')).toEqual({ ok: true, address: PUBLIC_2, source: 'dns' });

    // The name now points inside: the next answer is refused, though the name was fine a moment ago.
    server.set('flip.test', '127.0.0.1', 3600);
    time.now += 301;
    expect(await service.resolve('flip.test')).toEqual({
      ok: false,
      error: 'address 127.0.0.1 is not public: it is loopback (allow with DNS_ALLOW_PRIVATE / --allow-private, or DNS_ALLOW_CIDRS)',
      transient: false,
      refused: true,
    });
    expect(await service.resolve('flip.test')).toMatchObject({ ok: false }); // from the cache, vetted again
    expect(await allowing.resolve('flip.test')).toEqual({ ok: true, address: '127.0.0.1', source: 'dns' });
    expect(server.queries('flip.test')).toBe(4);
  });

  it('refreshes a hot name ahead of its expiry, so it stays cached across the TTL boundary', async () => {
    const time = clock();
    const start = time.now;
    server.set('hot.test', PUBLIC, 3600); // cached 300 ms; refreshable in its last 60 ms
    const { service, stats } = resolver({ DNS_REFRESH_AHEAD_RATIO: '0.2' });
    expect(await service.resolve('hot.test')).toMatchObject({ source: 'dns' });
    time.now = start + 200;
    expect(await service.resolve('hot.test')).toMatchObject({ source: 'cache' });
    await service.idle();
    expect(server.queries('hot.test')).toBe(1); // not yet in the refresh window

    time.now = start + 250;
    server.set('hot.test', PUBLIC_2, 3600);
    const inWindow = await Promise.all(Array.from({ length: 10 }, () => service.resolve('hot.test')));
    expect(inWindow.every((r) => r.ok && r.address === PUBLIC && r.source === 'cache')).toBe(true);
    await service.idle();
    expect(server.queries('hot.test')).toBe(2); // one background query for ten readers

    for (const t of [301, 400, 549]) {
      time.now = start + t; // past the first answer's expiry, inside the refreshed one's (250 + 300)
      expect(await service.resolve('hot.test')).toEqual({ ok: true, address: PUBLIC_2, source: 'cache' });
    }
    await service.idle();
    expect(server.queries('hot.test')).toBe(3); // +549 was in the refreshed entry's window: refreshed again
    expect(service.cacheCounts()).toEqual({ hits: 14, misses: 1, refreshes: 2, failures: 0 });
    expect(await stats.totals()).toEqual({ 'dns.cache-miss': 1, 'dns.cache-hit': 14, 'dns.refresh': 2 });
  });

  it('reports its hit rate', async () => {
    server.set('a.test', PUBLIC, 60);
    server.set('b.test', PUBLIC_2, 60);
    const { service } = resolver();
    expect(service.hitRate()).toBe(0);
    for (const name of ['a.test', 'a.test', 'a.test', 'b.test', 'a.test', 'b.test', 'c.test', 'c.test']) await service.resolve(name);
    expect(service.cacheCounts()).toEqual({ hits: 5, misses: 3, refreshes: 0, failures: 1 });
    expect(service.hitRate()).toBe(5 / 8);
    // Three lookups: A then AAAA for the two names that exist, A alone for the one that does not (NXDOMAIN).
    expect(server.log).toHaveLength(5);
  });

  it('allows names answered inside DNS_ALLOW_CIDRS while still refusing other private addresses', async () => {
    server.set('web.test', '127.0.0.1', 60);
    server.set('web-v6.test', '::1', 60);
    server.set('inside.test', '10.0.0.1', 60);
    const { service } = resolver({ DNS_ALLOW_CIDRS: '127.0.0.0/8,::1/128' });
    expect(await service.resolve('web.test')).toEqual({ ok: true, address: '127.0.0.1', source: 'dns' });
    expect(await service.resolve('web-v6.test')).toEqual({ ok: true, address: '::1', source: 'dns' });
    expect(await service.resolve('127.0.0.2')).toEqual({ ok: true, address: '127.0.0.2', source: 'literal' });
    expect(await service.resolve('10.0.0.1')).toEqual({ ok: false, error: expect.stringContaining('address 10.0.0.1 is not public'), transient: false, refused: true });
    expect(await service.resolve('inside.test')).toEqual({
      ok: false,
      error: expect.stringContaining('address 10.0.0.1 is not public'),
      transient: false,
      refused: true,
    });
    expect(await service.resolve('169.254.169.254')).toMatchObject({ ok: false });

    const strict = resolver().service;
    expect(await strict.resolve('web.test')).toEqual({ ok: false, error: expect.stringContaining('address 127.0.0.1 is not public'), transient: false, refused: true });
  });

  it('gives a silent server DNS_TIMEOUT_MS per try, DNS_TRIES times, then caches the failure as one that may pass', async () => {
    server.set('silent.test', PUBLIC, 60);
    server.delayMs = 5_000;
    const { service } = resolver({ DNS_TIMEOUT_MS: '100', DNS_TRIES: '2' });
    const started = performance.now();
    expect(await service.resolve('silent.test')).toEqual({ ok: false, error: 'DNS lookup of silent.test failed: ETIMEOUT', transient: true });
    const tookMs = performance.now() - started;
    expect(tookMs).toBeGreaterThanOrEqual(100);
    expect(tookMs).toBeLessThan(3_000);
    expect(server.log).toEqual([
      { name: 'silent.test', type: 'A' },
      { name: 'silent.test', type: 'A' },
    ]);
    expect(await service.resolve('silent.test')).toEqual({ ok: false, error: 'DNS lookup of silent.test failed: ETIMEOUT', transient: true });
    expect(server.log).toHaveLength(2);
  });

  describe('shared cache on Redis', () => {
    let store: RedisStateStore;

    beforeEach(() => {
      store = new RedisStateStore({ url: REDIS_URL, prefix: `dns-test-${randomUUID()}` });
    });

    afterEach(async () => {
      await Promise.all(services.map((service) => service.idle()));
      await store.clear();
      await store.close();
    });

    it('lets a second resolver (another replica) answer from the cache the first one filled, until the TTL runs out', async () => {
      // Cached 500 ms (Redis PX): long enough for the second resolver to ask on a loaded machine too.
      const cachedHalfASecond = { DNS_MIN_TTL_MS: '500', DNS_MAX_TTL_MS: '1000' };
      server.set('shared.test', PUBLIC, 0);
      const a = resolver(cachedHalfASecond, store);
      const b = resolver(cachedHalfASecond, store);
      expect(await a.service.resolve('shared.test')).toEqual({ ok: true, address: PUBLIC, source: 'dns' });
      expect(await b.service.resolve('shared.test')).toEqual({ ok: true, address: PUBLIC, source: 'cache' });
      expect(server.queries('shared.test')).toBe(1);
      expect(JSON.parse((await a.cache.get('shared.test'))!)).toEqual({ address: PUBLIC, ttlMs: 500, expiresAt: expect.any(Number) });
      expect(b.service.hitRate()).toBe(1);
      await a.stats.flush(); // each process adds its counts to the shared totals every STATS_FLUSH_MS
      expect(await b.stats.totals()).toEqual({ 'dns.cache-miss': 1, 'dns.cache-hit': 1 }); // one crawl-wide tally

      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await b.service.resolve('shared.test')).toEqual({ ok: true, address: PUBLIC, source: 'dns' });
      expect(server.queries('shared.test')).toBe(2);
    });
  });
});
