import * as nodeDns from 'node:dns';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { CrawlerConfig, loadConfig } from '@crawler/config';
import { CrawlStats } from '@crawler/runtime';
import { MemoryStateStore, StateStore } from '@crawler/state';
import { DnsResolverMetrics } from './dns-resolver.metrics';
import { DnsResolverService } from './dns-resolver.service';

/**
 * No test here may reach a real DNS server: the service's resolver (node:dns promises) is replaced by a
 * fake for every test, which fails loudly unless a test gives it answers.
 */
type Answer = { address: string; ttl: number }[] | NodeJS.ErrnoException;
const answers = new Map<string, { v4?: Answer; v6?: Answer }>();
const queries: string[] = [];

function fakeLookup(family: 'v4' | 'v6') {
  return async (name: string) => {
    queries.push(`${family}:${name}`);
    const known = answers.get(name);
    const answer = known?.[family];
    // As c-ares says it: NXDOMAIN is ENOTFOUND, a name without records of the type asked is ENODATA.
    if (!known) throw Object.assign(new Error(`queryA ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    if (answer === undefined) throw Object.assign(new Error(`queryA ENODATA ${name}`), { code: 'ENODATA' });
    if (answer instanceof Error) throw answer;
    return answer;
  };
}

beforeEach(() => {
  answers.clear();
  queries.length = 0;
  jest.spyOn(nodeDns.promises, 'resolve4').mockImplementation(fakeLookup('v4') as any);
  jest.spyOn(nodeDns.promises, 'resolve6').mockImplementation(fakeLookup('v6') as any);
});

afterEach(() => jest.restoreAllMocks());

const silent = pino({ level: 'silent' });

function service(state: StateStore, config: CrawlerConfig, stats = new CrawlStats(state, new Registry(), loadConfig({}))) {
  return new DnsResolverService(state, config, stats, silent, new DnsResolverMetrics(new Registry()));
}

function resolver(overrides: Record<string, unknown> = {}) {
  const state = new MemoryStateStore();
  const config = loadConfig({}, overrides);
  const stats = new CrawlStats(state, new Registry(), loadConfig({}));
  return { service: service(state, config, stats), cache: state.namespace('dns'), state, stats };
}

/** Date.now under the test's control (the memory store expires keys by it too). */
function clock(start = 1_000_000) {
  const time = { now: start };
  jest.spyOn(Date, 'now').mockImplementation(() => time.now);
  return time;
}

describe('DnsResolverService', () => {
  describe('IP literals', () => {
    it('vets a public IPv4 literal without any lookup', async () => {
      const { service } = resolver();
      expect(await service.resolve('93.184.216.34')).toEqual({ ok: true, address: '93.184.216.34', source: 'literal' });
      expect(queries).toEqual([]);
    });

    it('vets a bracketed IPv6 literal (as URL.hostname spells it)', async () => {
      const { service } = resolver();
      const hostname = new URL('http://[2606:2800:220:1:248:1893:25c8:1946]/').hostname;
      expect(hostname).toBe('[2606:2800:220:1:248:1893:25c8:1946]');
      expect(await service.resolve(hostname)).toEqual({ ok: true, address: '2606:2800:220:1:248:1893:25c8:1946', source: 'literal' });
    });

    it('refuses loopback and private literals by default, naming the address and how to allow it', async () => {
      const { service } = resolver();
      for (const [hostname, address] of [
        ['127.0.0.1', '127.0.0.1'],
        ['10.1.2.3', '10.1.2.3'],
        ['169.254.1.1', '169.254.1.1'],
        ['[::1]', '::1'],
        ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
        // IPv6 forms that lead to a private IPv4 address: NAT64, 6to4, IPv4-compatible.
        ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1'],
        ['[2002:a00:1::1]', '2002:a00:1::1'],
        ['[::10.0.0.1]', '::a00:1'],
      ]) {
        const name = hostname.startsWith('[') ? new URL(`http://${hostname}/`).hostname : hostname;
        const result = await service.resolve(name);
        expect(result.ok).toBe(false);
        if (result.ok) continue;
        expect(result.error).toContain(address);
        expect(result.error).toMatch(/not public/);
        expect(result.error).toMatch(/DNS_ALLOW_PRIVATE/);
        expect(result.error).toMatch(/--allow-private/);
      }
    });

    it('allows them with dns.allowPrivate', async () => {
      const { service } = resolver({ 'dns.allowPrivate': true });
      expect(await service.resolve('127.0.0.1')).toEqual({ ok: true, address: '127.0.0.1', source: 'literal' });
      expect(await service.resolve('[::1]')).toEqual({ ok: true, address: '::1', source: 'literal' });
    });

    it('refuses cloud metadata addresses even with dns.allowPrivate, literal, pinned or resolved, unless named alone', async () => {
      answers.set('metadata.test', { v4: [{ address: '169.254.169.254', ttl: 60 }] });
      const { service } = resolver({ 'dns.allowPrivate': true, 'dns.hosts': { 'pinned.test': 'fd00:ec2::254' } });
      for (const name of ['169.254.169.254', '100.100.100.200', new URL('http://[64:ff9b::169.254.169.254]/').hostname, 'pinned.test', 'metadata.test']) {
        const result = await service.resolve(name);
        expect(result).toMatchObject({ ok: false, transient: false, refused: true, error: expect.stringMatching(/cloud metadata endpoint/) });
      }
      const named = resolver({ 'dns.allowCidrs': ['169.254.169.254/32'] }).service;
      expect(await named.resolve('169.254.169.254')).toEqual({ ok: true, address: '169.254.169.254', source: 'literal' });
    });
  });

  describe('static hosts map', () => {
    it('answers from dns.hosts, whatever the case of the name asked', async () => {
      const { service } = resolver({ 'dns.hosts': { 'site.test': '93.184.216.34', 'v6.test': '2001:db8::1' } });
      expect(await service.resolve('site.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'hosts' });
      expect(await service.resolve('SITE.Test')).toEqual({ ok: true, address: '93.184.216.34', source: 'hosts' });
      expect(await service.resolve('v6.test')).toEqual({ ok: true, address: '2001:db8::1', source: 'hosts' });
      expect(queries).toEqual([]);
    });

    it('accepts names given in any case through DNS_HOSTS (the parser lower-cases them)', async () => {
      const state = new MemoryStateStore();
      const mixed = service(state, loadConfig({ DNS_HOSTS: 'Mixed.TEST=93.184.216.34' }));
      expect(await mixed.resolve('mixed.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'hosts' });
    });

    it('still vets what the hosts map says', async () => {
      const { service } = resolver({ 'dns.hosts': { 'site.test': '127.0.0.1' } });
      const refused = await service.resolve('site.test');
      expect(refused).toEqual({ ok: false, error: expect.stringContaining('127.0.0.1'), transient: false, refused: true });

      const allowed = resolver({ 'dns.hosts': { 'site.test': '127.0.0.1' }, 'dns.allowPrivate': true });
      expect(await allowed.service.resolve('Site.Test')).toEqual({ ok: true, address: '127.0.0.1', source: 'hosts' });
    });

    it('prefers the hosts map over a cached answer', async () => {
      const { service, cache } = resolver({ 'dns.hosts': { 'site.test': '93.184.216.34' } });
      await cache.set('site.test', JSON.stringify({ address: '8.8.8.8' }));
      expect(await service.resolve('site.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'hosts' });
    });
  });

  describe("the machine's hosts file", () => {
    function hostsFile(text: string): string {
      const dir = mkdtempSync(join(tmpdir(), 'system-hosts-'));
      const path = join(dir, 'hosts');
      writeFileSync(path, text);
      return path;
    }

    it('answers the names every other program on the machine resolves through it, before DNS', async () => {
      const path = hostsFile('# comment\n203.0.113.7   intranet.example   Wiki.Example # trailing\n2001:db8::7 intranet.example\n');
      answers.set('intranet.example', { v4: [{ address: '198.51.100.1', ttl: 300 }] });
      const { service } = resolver({ 'dns.systemHostsFile': path });
      expect(await service.resolve('intranet.example')).toEqual({ ok: true, address: '203.0.113.7', fallbacks: ['2001:db8::7'], source: 'hosts' });
      expect(await service.resolve('wiki.example')).toEqual({ ok: true, address: '203.0.113.7', source: 'hosts' });
      expect(queries).toEqual([]);
    });

    it('gives a name every address it has there, and drops those the crawl may not reach', async () => {
      const path = hostsFile('127.0.0.3 two.test\n127.0.0.2 two.test\n10.0.0.5 site.test\n93.184.216.34 site.test\n::1 two.test\n');
      const allowed = resolver({ 'dns.systemHostsFile': path, 'dns.allowPrivate': true });
      expect(await allowed.service.resolve('two.test')).toEqual({ ok: true, address: '127.0.0.3', fallbacks: ['127.0.0.2', '::1'], source: 'hosts' });
      const { service } = resolver({ 'dns.systemHostsFile': path });
      // Without dns.allowPrivate the private address is never handed on, not even as a fallback.
      expect(await service.resolve('site.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'hosts' });
      expect(await service.resolve('two.test')).toMatchObject({ ok: false, refused: true, error: expect.stringContaining('127.0.0.3') });
    });

    it('reads /etc/hosts by default', () => {
      expect(loadConfig({}).dns.systemHostsFile).toBe('/etc/hosts');
    });

    it('is not read when DNS_SYSTEM_HOSTS_FILE=off', async () => {
      const path = hostsFile('203.0.113.7 intranet.example\n');
      answers.set('intranet.example', { v4: [{ address: '198.51.100.1', ttl: 300 }] });
      const { service } = resolver({ 'dns.systemHostsFile': 'off' });
      expect(path).toBeTruthy();
      expect(loadConfig({ DNS_SYSTEM_HOSTS_FILE: 'off' }).dns.systemHostsFile).toBe('off');
      expect(await service.resolve('intranet.example')).toEqual({ ok: true, address: '198.51.100.1', source: 'dns' });
    });

    it("gives way to the operator's own hosts map, and is vetted like any answer", async () => {
      const path = hostsFile('127.0.0.1 intranet.example pinned.example\n');
      const { service } = resolver({ 'dns.systemHostsFile': path, 'dns.hosts': { 'pinned.example': '203.0.113.9' } });
      expect(await service.resolve('pinned.example')).toEqual({ ok: true, address: '203.0.113.9', source: 'hosts' });
      expect(await service.resolve('intranet.example')).toEqual({ ok: false, error: expect.stringContaining('127.0.0.1'), transient: false, refused: true });
    });

    it('sees a change of the file once the minimum TTL has passed, not before', async () => {
      const time = clock();
      const path = hostsFile('203.0.113.7 moving.example\n');
      const { service } = resolver({ 'dns.systemHostsFile': path, 'dns.minTtlMs': 60_000 });
      expect(await service.resolve('moving.example')).toMatchObject({ address: '203.0.113.7' });
      writeFileSync(path, '203.0.113.8 moving.example   # a longer file than before\n');
      time.now += 59_000;
      expect(await service.resolve('moving.example')).toMatchObject({ address: '203.0.113.7' });
      time.now += 2_000;
      expect(await service.resolve('moving.example')).toMatchObject({ address: '203.0.113.8' });
      rmSync(path);
      answers.set('moving.example', { v4: [{ address: '198.51.100.1', ttl: 300 }] });
      time.now += 61_000;
      expect(await service.resolve('moving.example')).toEqual({ ok: true, address: '198.51.100.1', source: 'dns' });
    });
  });

  describe('shared cache (state store, namespace "dns")', () => {
    it('uses a cached answer, keyed by the lower-case name', async () => {
      const { service, cache } = resolver();
      await cache.set('cached.test', JSON.stringify({ address: '93.184.216.34' }));
      expect(await service.resolve('CACHED.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'cache' });
      expect(queries).toEqual([]);
    });

    it('returns a cached failure as a failure', async () => {
      const { service, cache } = resolver();
      await cache.set('broken.test', JSON.stringify({ error: 'DNS lookup of broken.test failed: ENOTFOUND' }));
      expect(await service.resolve('broken.test')).toEqual({ ok: false, error: 'DNS lookup of broken.test failed: ENOTFOUND', transient: false });
      expect(queries).toEqual([]);
    });

    it('vets a cached answer too', async () => {
      const { service, cache } = resolver();
      await cache.set('inside.test', JSON.stringify({ address: '192.168.1.1' }));
      expect(await service.resolve('inside.test')).toEqual({ ok: false, error: expect.stringContaining('192.168.1.1'), transient: false, refused: true });
    });

    it('sees answers another replica cached (same store, another service instance)', async () => {
      const state = new MemoryStateStore();
      const config = loadConfig({}, {});
      const [a, b] = [service(state, config), service(state, config)];
      answers.set('shared.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      expect(await a.resolve('shared.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      expect(await b.resolve('shared.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'cache' });
      expect(queries).toEqual(['v4:shared.test', 'v6:shared.test']);
    });
  });

  describe('lookups (fake resolver)', () => {
    it('caches an answer in the format the cache path reads, with its TTL and expiry', async () => {
      const { service, cache } = resolver();
      const time = clock();
      answers.set('fresh.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      expect(await service.resolve('fresh.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      expect(JSON.parse((await cache.get('fresh.test'))!)).toEqual({ address: '93.184.216.34', ttlMs: 300_000, expiresAt: time.now + 300_000 });
      expect(await service.resolve('fresh.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'cache' });
    });

    it('falls back to AAAA when there is no A record', async () => {
      const { service } = resolver();
      answers.set('v6only.test', { v6: [{ address: '2001:4860:4860::8888', ttl: 300 }] });
      expect(await service.resolve('v6only.test')).toEqual({ ok: true, address: '2001:4860:4860::8888', source: 'dns' });
      expect(queries).toEqual(['v4:v6only.test', 'v6:v6only.test']);
    });

    it('caches a failure, and answers it from the cache next time', async () => {
      const { service, cache } = resolver();
      const time = clock();
      const first = await service.resolve('nowhere.test');
      expect(first).toEqual({ ok: false, error: 'DNS lookup of nowhere.test failed: ENOTFOUND', transient: false });
      expect(JSON.parse((await cache.get('nowhere.test'))!)).toEqual({
        error: 'DNS lookup of nowhere.test failed: ENOTFOUND',
        transient: false,
        ttlMs: 30_000,
        expiresAt: time.now + 30_000,
      });
      expect(await service.resolve('nowhere.test')).toEqual(first);
      // NXDOMAIN: the name has no records of any type, so AAAA is not asked.
      expect(queries).toEqual(['v4:nowhere.test']);
    });

    it('reports the AAAA failure when the name has neither A nor AAAA records', async () => {
      const { service } = resolver();
      answers.set('empty.test', {});
      expect(await service.resolve('empty.test')).toEqual({ ok: false, error: 'DNS lookup of empty.test failed: ENODATA', transient: false });
      expect(queries).toEqual(['v4:empty.test', 'v6:empty.test']);
    });

    it('does not ask for AAAA after a timeout', async () => {
      const { service } = resolver();
      answers.set('slow.test', { v4: Object.assign(new Error('queryA ETIMEOUT slow.test'), { code: 'ETIMEOUT' }) });
      expect(await service.resolve('slow.test')).toEqual({ ok: false, error: 'DNS lookup of slow.test failed: ETIMEOUT', transient: true });
      expect(queries).toEqual(['v4:slow.test']);
    });

    it('keeps every address of the name, A records before AAAA ones, and the shortest TTL of them all', async () => {
      const { service, cache } = resolver();
      answers.set('dual.test', {
        v4: [
          { address: '93.184.216.34', ttl: 300 },
          { address: '93.184.216.35', ttl: 300 },
        ],
        v6: [{ address: '2606:2800:220:1:248:1893:25c8:1946', ttl: 60 }],
      });
      const fallbacks = ['93.184.216.35', '2606:2800:220:1:248:1893:25c8:1946'];
      expect(await service.resolve('dual.test')).toEqual({ ok: true, address: '93.184.216.34', fallbacks, source: 'dns' });
      expect(queries).toEqual(['v4:dual.test', 'v6:dual.test']);
      expect(JSON.parse((await cache.get('dual.test'))!)).toMatchObject({ address: '93.184.216.34', others: fallbacks, ttlMs: 60_000 });
      expect(await service.resolve('dual.test')).toEqual({ ok: true, address: '93.184.216.34', fallbacks, source: 'cache' });
    });

    it('keeps the A answer when the AAAA query fails', async () => {
      const { service } = resolver();
      answers.set('v4only.test', { v4: [{ address: '93.184.216.34', ttl: 300 }], v6: Object.assign(new Error('queryAAAA ETIMEOUT'), { code: 'ETIMEOUT' }) });
      expect(await service.resolve('v4only.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
    });

    it('drops the addresses the crawl may not reach, and refuses a name only when every address is refused', async () => {
      const { service } = resolver();
      answers.set('mixed.test', {
        v4: [
          { address: '10.0.0.5', ttl: 300 },
          { address: '93.184.216.34', ttl: 300 },
        ],
        v6: [{ address: '::1', ttl: 300 }],
      });
      expect(await service.resolve('mixed.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      answers.set('inside.test', { v4: [{ address: '10.0.0.5', ttl: 300 }], v6: [{ address: '::1', ttl: 300 }] });
      expect(await service.resolve('inside.test')).toMatchObject({ ok: false, refused: true, transient: false, error: expect.stringContaining('10.0.0.5') });
    });

    it('keeps the shortest TTL of the answer set', async () => {
      const { service, cache } = resolver();
      answers.set('set.test', {
        v4: [
          { address: '93.184.216.34', ttl: 900 },
          { address: '93.184.216.35', ttl: 120 },
        ],
      });
      await service.resolve('set.test');
      expect(JSON.parse((await cache.get('set.test'))!)).toMatchObject({ address: '93.184.216.34', ttlMs: 120_000 });
    });

    it('keeps answers for their TTL clamped to [minTtl, maxTtl], and failures for failureTtl', async () => {
      const { service, cache } = resolver({ 'dns.minTtlMs': 60_000, 'dns.maxTtlMs': 120_000, 'dns.failureTtlMs': 5_000 });
      let now = 1_000_000;
      jest.spyOn(Date, 'now').mockImplementation(() => now);
      answers.set('short.test', { v4: [{ address: '93.184.216.34', ttl: 1 }] });
      answers.set('mid.test', { v4: [{ address: '93.184.216.34', ttl: 90 }] });
      answers.set('long.test', { v4: [{ address: '93.184.216.34', ttl: 86_400 }] });
      for (const name of ['short.test', 'mid.test', 'long.test', 'missing.test']) await service.resolve(name);
      const alive = async () => {
        const names = [];
        for (const name of ['short.test', 'mid.test', 'long.test', 'missing.test']) if (await cache.get(name)) names.push(name);
        return names;
      };
      now += 4_999;
      expect(await alive()).toEqual(['short.test', 'mid.test', 'long.test', 'missing.test']);
      now += 2;
      expect(await alive()).toEqual(['short.test', 'mid.test', 'long.test']);
      now = 1_000_000 + 60_001;
      expect(await alive()).toEqual(['mid.test', 'long.test']);
      now = 1_000_000 + 90_001;
      expect(await alive()).toEqual(['long.test']);
      now = 1_000_000 + 120_001;
      expect(await alive()).toEqual([]);
    });

    it('shares one query between concurrent lookups of one name', async () => {
      const { service } = resolver();
      answers.set('busy.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      const results = await Promise.all(Array.from({ length: 5 }, () => service.resolve('busy.test')));
      expect(results.every((r) => r.ok && r.address === '93.184.216.34')).toBe(true);
      expect(queries).toEqual(['v4:busy.test', 'v6:busy.test']);
    });

    it('refuses a looked-up private address', async () => {
      const { service } = resolver();
      answers.set('rebind.test', { v4: [{ address: '10.0.0.5', ttl: 300 }] });
      expect(await service.resolve('rebind.test')).toEqual({ ok: false, error: expect.stringContaining('10.0.0.5'), transient: false, refused: true });
    });
  });

  describe('refresh-ahead', () => {
    const config = { 'dns.minTtlMs': 1_000, 'dns.maxTtlMs': 100_000, 'dns.refreshAheadRatio': 0.2 };

    it('refreshes an answer read in the last 20% of its TTL in the background, once, and keeps it cached past its old expiry', async () => {
      const { service, cache } = resolver(config);
      const time = clock();
      answers.set('hot.test', { v4: [{ address: '93.184.216.34', ttl: 10 }] });
      await service.resolve('hot.test'); // cached until +10 s, refreshable from +8 s
      time.now += 7_999;
      expect(await service.resolve('hot.test')).toMatchObject({ source: 'cache' });
      await service.idle();
      expect(queries).toEqual(['v4:hot.test', 'v6:hot.test']);

      time.now += 2;
      answers.set('hot.test', { v4: [{ address: '93.184.216.35', ttl: 10 }] });
      // Many readers in the window: one refresh; each of them gets the answer it read.
      const reads = await Promise.all(Array.from({ length: 5 }, () => service.resolve('hot.test')));
      expect(reads.every((r) => r.ok && r.address === '93.184.216.34' && r.source === 'cache')).toBe(true);
      await service.idle();
      expect(queries).toEqual(['v4:hot.test', 'v6:hot.test', 'v4:hot.test', 'v6:hot.test']);
      expect(JSON.parse((await cache.get('hot.test'))!)).toEqual({ address: '93.184.216.35', ttlMs: 10_000, expiresAt: time.now + 10_000 });

      time.now += 5_000; // past the first answer's expiry
      expect(await service.resolve('hot.test')).toEqual({ ok: true, address: '93.184.216.35', source: 'cache' });
      expect(service.cacheCounts()).toEqual({ hits: 7, misses: 1, refreshes: 1, failures: 0 });
    });

    it('keeps the answer it has when the refresh fails, until that answer expires', async () => {
      const { service } = resolver(config);
      const time = clock();
      answers.set('flaky.test', { v4: [{ address: '93.184.216.34', ttl: 10 }] });
      await service.resolve('flaky.test');
      answers.delete('flaky.test');
      time.now += 9_000;
      await service.resolve('flaky.test');
      await service.idle();
      expect(await service.resolve('flaky.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'cache' });
      await service.idle(); // the read above started a second refresh (the first one is over); it fails too
      time.now += 1_001;
      expect(await service.resolve('flaky.test')).toEqual({ ok: false, error: 'DNS lookup of flaky.test failed: ENOTFOUND', transient: false });
      expect(service.cacheCounts()).toMatchObject({ refreshes: 2, failures: 3 });
    });

    it('does not refresh failures, entries without an expiry (older format), or anything when the ratio is 0', async () => {
      const time = clock();
      const { service, cache } = resolver(config);
      answers.set('old.test', { v4: [{ address: '93.184.216.35', ttl: 10 }] });
      await cache.set('old.test', JSON.stringify({ address: '93.184.216.34' }), 1_000);
      await cache.set('gone.test', JSON.stringify({ error: 'DNS lookup of gone.test failed: ENOTFOUND', ttlMs: 1_000, expiresAt: time.now + 1_000 }), 1_000);
      time.now += 999;
      expect(await service.resolve('old.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'cache' });
      expect(await service.resolve('gone.test')).toMatchObject({ ok: false });

      const off = resolver({ ...config, 'dns.refreshAheadRatio': 0 });
      await off.service.resolve('old.test');
      time.now += 9_999;
      await off.service.resolve('old.test');
      await Promise.all([service.idle(), off.service.idle()]);
      expect(queries).toEqual(['v4:old.test', 'v6:old.test']); // off's own first lookup, nothing else
    });
  });

  describe('counts', () => {
    it('counts hits, misses, refreshes and failures in CrawlStats and gives the hit rate', async () => {
      const { service, stats } = resolver({ 'dns.minTtlMs': 1_000, 'dns.maxTtlMs': 10_000 });
      const time = clock();
      expect(service.hitRate()).toBe(0);
      answers.set('a.test', { v4: [{ address: '93.184.216.34', ttl: 10 }] });
      await service.resolve('a.test'); // miss
      await service.resolve('a.test'); // hit
      await service.resolve('a.test'); // hit
      await service.resolve('missing.test'); // miss, failure
      await service.resolve('missing.test'); // hit (cached failure)
      time.now += 9_000;
      await service.resolve('a.test'); // hit, refresh
      await service.idle();
      await service.resolve('93.184.216.34'); // literal: not a cache read
      expect(service.hitRate()).toBeCloseTo(4 / 6);
      expect(service.cacheCounts()).toEqual({ hits: 4, misses: 2, refreshes: 1, failures: 1 });
      expect(await stats.totals()).toEqual({ 'dns.cache-hit': 4, 'dns.cache-miss': 2, 'dns.refresh': 1, 'dns.failure': 1 });
    });
  });

  describe('Prometheus metrics', () => {
    const sample = (text: string, series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };

    it('counts each resolution through the cache as hit, miss or failure, and refreshes by result', async () => {
      const state = new MemoryStateStore();
      const registry = new Registry();
      const config = loadConfig({}, { 'dns.minTtlMs': 1_000, 'dns.maxTtlMs': 10_000 });
      const service = new DnsResolverService(state, config, new CrawlStats(state, new Registry(), loadConfig({})), silent, new DnsResolverMetrics(registry));
      const time = clock();
      // Every series is there before the first lookup: the hit rate is 0/0, not a missing series.
      expect(sample(await registry.metrics(), 'crawler_dns_lookups_total{result="hit"}')).toBe(0);
      answers.set('a.test', { v4: [{ address: '93.184.216.34', ttl: 10 }] });
      await service.resolve('a.test'); // miss
      await service.resolve('a.test'); // hit
      await service.resolve('missing.test'); // failure
      await service.resolve('missing.test'); // hit (a cached failure)
      time.now += 9_000;
      await service.resolve('a.test'); // hit, refresh (ok)
      await service.idle();
      answers.delete('a.test');
      time.now += 9_000; // the refreshed answer is near its end again
      await service.resolve('a.test'); // hit, refresh (failure)
      await service.idle();
      await service.resolve('93.184.216.34'); // a literal is not a lookup
      const text = await registry.metrics();
      expect(sample(text, 'crawler_dns_lookups_total{result="hit"}')).toBe(4);
      expect(sample(text, 'crawler_dns_lookups_total{result="miss"}')).toBe(1);
      expect(sample(text, 'crawler_dns_lookups_total{result="failure"}')).toBe(1);
      expect(sample(text, 'crawler_dns_refreshes_total{result="ok"}')).toBe(1);
      expect(sample(text, 'crawler_dns_refreshes_total{result="failure"}')).toBe(1);
      // The same hits and misses as the process's own counts (a failure is a miss there).
      expect(service.cacheCounts()).toMatchObject({ hits: 4, misses: 2 });
    });

    it('counts the answers of the hosts files (DNS_HOSTS, DNS_HOSTS_FILE, the system’s) as lookups answered by hosts', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dns-hosts-metrics-'));
      const system = join(dir, 'hosts');
      const own = join(dir, 'crawl-hosts');
      writeFileSync(system, '203.0.113.7 intranet.example\n');
      writeFileSync(own, '203.0.113.8 filed.example\n');
      const state = new MemoryStateStore();
      const registry = new Registry();
      const stats = new CrawlStats(state, new Registry(), loadConfig({}));
      const config = loadConfig({ DNS_HOSTS_FILE: own }, { 'dns.systemHostsFile': system, 'dns.hosts': { 'pinned.example': '203.0.113.9' } });
      const service = new DnsResolverService(state, config, stats, silent, new DnsResolverMetrics(registry));
      answers.set('a.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      for (const name of ['pinned.example', 'filed.example', 'intranet.example', 'a.test']) expect(await service.resolve(name)).toMatchObject({ ok: true });
      const text = await registry.metrics();
      expect(sample(text, 'crawler_dns_lookups_total{result="hosts"}')).toBe(3);
      expect(sample(text, 'crawler_dns_lookups_total{result="miss"}')).toBe(1);
      expect((await stats.totals())['dns.hosts']).toBe(3);
      rmSync(dir, { recursive: true, force: true });
    });
  });

  describe('cache entries it cannot read', () => {
    it('treats them as misses, logs them, and overwrites them', async () => {
      const state = new MemoryStateStore();
      const logger = pino({ level: 'silent' });
      const warn = jest.spyOn(logger, 'warn');
      const broken = new DnsResolverService(state, loadConfig({}), new CrawlStats(state, new Registry(), loadConfig({})), logger, new DnsResolverMetrics(new Registry()));
      const cache = state.namespace('dns');
      answers.set('junk.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      answers.set('notip.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      await cache.set('junk.test', '{not json');
      await cache.set('notip.test', JSON.stringify({ address: 'example.com' }));
      expect(await broken.resolve('junk.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      expect(await broken.resolve('notip.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      expect(await broken.resolve('junk.test')).toMatchObject({ source: 'cache' });
      expect(warn).toHaveBeenCalledWith(expect.objectContaining({ event: 'dns-cache-unreadable', name: 'junk.test' }));
    });
  });

  describe('configured DNS servers', () => {
    it('asks them through a Resolver with the configured timeout and tries, instead of the system resolver', async () => {
      const made: { options: unknown; servers: string[] }[] = [];
      jest.spyOn(nodeDns.promises, 'Resolver').mockImplementation(((options: unknown) => {
        const fake = { options, servers: [] as string[] };
        made.push(fake);
        return Object.assign(fake, {
          setServers: (servers: string[]) => fake.servers.push(...servers),
          resolve4: async (name: string) => {
            queries.push(`configured-v4:${name}`);
            return [{ address: '93.184.216.34', ttl: 60 }];
          },
          resolve6: async () => [],
        });
      }) as any);
      const { service } = resolver({ 'dns.servers': ['127.0.0.1:5353', '::1'], 'dns.timeoutMs': 500, 'dns.tries': 3 });
      expect(made.map(({ options, servers }) => ({ options, servers }))).toEqual([{ options: { timeout: 500, tries: 3 }, servers: ['127.0.0.1:5353', '::1'] }]);
      expect(await service.resolve('configured.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      expect(queries).toEqual(['configured-v4:configured.test']);
    });
  });

  describe('CIDR allowlist', () => {
    it('allows non-public answers inside dns.allowCidrs and still refuses the rest', async () => {
      const { service } = resolver({
        'dns.allowCidrs': ['127.0.0.0/8', '::1/128'],
        'dns.hosts': { 'web.test': '127.0.0.7', 'inside.test': '10.0.0.1' },
      });
      answers.set('looked-up.test', { v4: [{ address: '127.0.0.1', ttl: 300 }] });
      expect(await service.resolve('web.test')).toEqual({ ok: true, address: '127.0.0.7', source: 'hosts' });
      expect(await service.resolve('looked-up.test')).toEqual({ ok: true, address: '127.0.0.1', source: 'dns' });
      expect(await service.resolve('[::1]')).toEqual({ ok: true, address: '::1', source: 'literal' });
      expect(await service.resolve('10.0.0.1')).toEqual({
        ok: false,
        error: expect.stringMatching(/10\.0\.0\.1 is not public.*DNS_ALLOW_CIDRS/),
        transient: false,
        refused: true,
      });
      expect(await service.resolve('inside.test')).toEqual({ ok: false, error: expect.stringContaining('10.0.0.1'), transient: false, refused: true });
    });
  });

  describe('regressions', () => {
    it('resolves a host named like an Object.prototype member through DNS, not the prototype', async () => {
      const { service } = resolver();
      answers.set('constructor', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      await expect(service.resolve('constructor')).resolves.toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
    });
  });
});
