import * as nodeDns from 'node:dns';
import { loadConfig } from '@crawler/config';
import { MemoryStateStore } from '@crawler/state';
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
    const answer = answers.get(name)?.[family];
    if (answer === undefined) throw Object.assign(new Error(`queryA ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
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

function resolver(overrides: Record<string, unknown> = {}) {
  const state = new MemoryStateStore();
  const config = loadConfig({}, overrides);
  return { service: new DnsResolverService(state, config), cache: state.namespace('dns'), state };
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
        ['169.254.169.254', '169.254.169.254'],
        ['[::1]', '::1'],
        ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
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
      const service = new DnsResolverService(state, loadConfig({ DNS_HOSTS: 'Mixed.TEST=93.184.216.34' }));
      expect(await service.resolve('mixed.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'hosts' });
    });

    it('still vets what the hosts map says', async () => {
      const { service } = resolver({ 'dns.hosts': { 'site.test': '127.0.0.1' } });
      const refused = await service.resolve('site.test');
      expect(refused).toEqual({ ok: false, error: expect.stringContaining('127.0.0.1') });

      const allowed = resolver({ 'dns.hosts': { 'site.test': '127.0.0.1' }, 'dns.allowPrivate': true });
      expect(await allowed.service.resolve('Site.Test')).toEqual({ ok: true, address: '127.0.0.1', source: 'hosts' });
    });

    it('prefers the hosts map over a cached answer', async () => {
      const { service, cache } = resolver({ 'dns.hosts': { 'site.test': '93.184.216.34' } });
      await cache.set('site.test', JSON.stringify({ address: '8.8.8.8' }));
      expect(await service.resolve('site.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'hosts' });
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
      expect(await service.resolve('broken.test')).toEqual({ ok: false, error: 'DNS lookup of broken.test failed: ENOTFOUND' });
      expect(queries).toEqual([]);
    });

    it('vets a cached answer too', async () => {
      const { service, cache } = resolver();
      await cache.set('inside.test', JSON.stringify({ address: '192.168.1.1' }));
      expect(await service.resolve('inside.test')).toEqual({ ok: false, error: expect.stringContaining('192.168.1.1') });
    });

    it('sees answers another replica cached (same store, another service instance)', async () => {
      const state = new MemoryStateStore();
      const config = loadConfig({}, {});
      const [a, b] = [new DnsResolverService(state, config), new DnsResolverService(state, config)];
      answers.set('shared.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      expect(await a.resolve('shared.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      expect(await b.resolve('shared.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'cache' });
      expect(queries).toEqual(['v4:shared.test']);
    });
  });

  describe('lookups (fake resolver)', () => {
    it('caches an answer in the format the cache path reads', async () => {
      const { service, cache } = resolver();
      answers.set('fresh.test', { v4: [{ address: '93.184.216.34', ttl: 300 }] });
      expect(await service.resolve('fresh.test')).toEqual({ ok: true, address: '93.184.216.34', source: 'dns' });
      expect(JSON.parse((await cache.get('fresh.test'))!)).toEqual({ address: '93.184.216.34' });
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
      const first = await service.resolve('nowhere.test');
      expect(first).toEqual({ ok: false, error: 'DNS lookup of nowhere.test failed: ENOTFOUND' });
      expect(JSON.parse((await cache.get('nowhere.test'))!)).toEqual({ error: 'DNS lookup of nowhere.test failed: ENOTFOUND' });
      expect(await service.resolve('nowhere.test')).toEqual(first);
      expect(queries).toEqual(['v4:nowhere.test', 'v6:nowhere.test']);
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
      expect(queries).toEqual(['v4:busy.test']);
    });

    it('refuses a looked-up private address', async () => {
      const { service } = resolver();
      answers.set('rebind.test', { v4: [{ address: '10.0.0.5', ttl: 300 }] });
      expect(await service.resolve('rebind.test')).toEqual({ ok: false, error: expect.stringContaining('10.0.0.5') });
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
