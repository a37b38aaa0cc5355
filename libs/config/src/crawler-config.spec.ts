import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import zlib from 'node:zlib';
import { zstdBuiltIn } from '@crawler/content-store';
import { ConfigError, ENV_NAMES, loadConfig, parseHostsFile } from './crawler-config';

describe('loadConfig', () => {
  it('gives polite defaults', () => {
    const config = loadConfig({});
    expect(config.frontier.minDelayMs).toBeGreaterThanOrEqual(1000);
    expect(config.dns.allowPrivate).toBe(false);
    expect(config.redisUrl).toBeUndefined();
    expect(config.downloader.maxBodyBytes).toBe(256 * 1024);
  });

  it("sends a User-Agent that points site owners at the repository's page for them", () => {
    const { userAgent } = loadConfig({}).downloader;
    const page = /\(\+https:\/\/github\.com\/crawler\/crawler\/blob\/main\/(docs\/[\w-]+\.md)\)$/.exec(userAgent)?.[1];
    expect(page).toBe('docs/for-site-owners.md');
    expect(readFileSync(join(__dirname, '../../..', page!), 'utf8')).toContain(userAgent);
  });

  it('reads service knobs from prefixed variables and flags override them', () => {
    const config = loadConfig({ DNS_HOSTS: 'a.test=127.0.0.1, b.test=::1', URL_FILTER_SCOPE: 'any', DNS_ALLOW_PRIVATE: 'true' }, { 'filter.scope': 'host' });
    expect(config.dns.hosts).toEqual({ 'a.test': '127.0.0.1', 'b.test': '::1' });
    expect(config.dns.allowPrivate).toBe(true);
    expect(config.filter.scope).toBe('host');
  });

  it('names every bad variable, its value and what is allowed', () => {
    let error: unknown;
    try {
      loadConfig({ URL_FILTER_SCOPE: 'planet', FRONTIER_MIN_DELAY_MS: '-3', REDIS_URL: 'http://x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/URL_FILTER_SCOPE: .*"planet"/);
    expect(message).toMatch(/host/);
    expect(message).toMatch(/FRONTIER_MIN_DELAY_MS: .*"-3"/);
    expect(message).toMatch(/REDIS_URL/);
  });

  it('refuses a lease that could run out during its fetch', () => {
    expect(() => loadConfig({ FRONTIER_LEASE_MS: '30000', DOWNLOADER_TOTAL_TIMEOUT_MS: '60000' })).toThrow(
      /FRONTIER_LEASE_MS: must be longer than DOWNLOADER_TOTAL_TIMEOUT_MS/,
    );
  });

  it('refuses a batch memory shorter than an outage its batches are retried through', () => {
    expect(loadConfig({}).frontier).toMatchObject({ batchMemoryMs: 900_000, auditLength: 10 });
    expect(() => loadConfig({ FRONTIER_BATCH_MEMORY_MS: '600000' })).toThrow(/FRONTIER_BATCH_MEMORY_MS: must be longer than QUEUE_INFRA_OUTAGE_MAX_MS/);
    expect(loadConfig({ FRONTIER_BATCH_MEMORY_MS: '300000', QUEUE_INFRA_OUTAGE_MAX_MS: '120000' }).frontier.batchMemoryMs).toBe(300_000);
  });

  it('refuses a URL-seen answer memory shorter than an outage its batches are retried through', () => {
    expect(loadConfig({}).seen.answerMemoryMs).toBe(604_800_000);
    expect(() => loadConfig({ URL_SEEN_ANSWER_MEMORY_MS: '600000' })).toThrow(/URL_SEEN_ANSWER_MEMORY_MS: must be longer than QUEUE_INFRA_OUTAGE_MAX_MS/);
    expect(loadConfig({ URL_SEEN_ANSWER_MEMORY_MS: '300000', QUEUE_INFRA_OUTAGE_MAX_MS: '120000' }).seen.answerMemoryMs).toBe(300_000);
  });

  it('takes a PostgreSQL URL for the records, refusing any other by name', () => {
    expect(loadConfig({}).recordsUrl).toBeUndefined();
    expect(loadConfig({ RECORDS_URL: 'postgres://crawler:pw@db:5432/crawl', RECORDS_POOL_SIZE: '4' })).toMatchObject({
      recordsUrl: 'postgres://crawler:pw@db:5432/crawl',
      recordsPoolSize: 4,
    });
    expect(() => loadConfig({ RECORDS_URL: 'redis://127.0.0.1:6379' })).toThrow(/RECORDS_URL: must be a PostgreSQL URL/);
    expect(() => loadConfig({ RECORDS_POOL_SIZE: '0' })).toThrow(/RECORDS_POOL_SIZE/);
    expect(loadConfig({}).recordsStartupWaitMs).toBe(30_000);
    expect(loadConfig({ RECORDS_STARTUP_WAIT_MS: '0' }).recordsStartupWaitMs).toBe(0);
    expect(() => loadConfig({ RECORDS_STARTUP_WAIT_MS: 'soon' })).toThrow(/RECORDS_STARTUP_WAIT_MS/);
  });

  it('leaves the frontier shards to the Redis kind unless set, and keeps them in 1 … 256', () => {
    expect(loadConfig({}).frontier.shards).toBeUndefined();
    expect(loadConfig({ FRONTIER_SHARDS: '16' }).frontier.shards).toBe(16);
    expect(() => loadConfig({ FRONTIER_SHARDS: '0' })).toThrow(/FRONTIER_SHARDS/);
    expect(() => loadConfig({ FRONTIER_SHARDS: '257' })).toThrow(/FRONTIER_SHARDS/);
  });

  it.each([['bot/1\r\nX-Injected: yes'], ['bot/1\n'], ['bot\u0000/1'], ['bot/1\u007f'], [' bot/1']])(
    'refuses a User-Agent that is not a valid header value: %j',
    (agent) => {
      expect(() => loadConfig({ DOWNLOADER_USER_AGENT: agent })).toThrow(/DOWNLOADER_USER_AGENT: must/);
    },
  );

  it('accepts an ordinary User-Agent, tabs and non-ASCII bytes included', () => {
    expect(loadConfig({ DOWNLOADER_USER_AGENT: 'acme-bot/2.0 (+https://acme.example/bot;\tcontact@acme.example) é' }).downloader.userAgent).toMatch(/^acme-bot/);
  });

  it('refuses a static answer that is not an address', () => {
    expect(() => loadConfig({ DNS_HOSTS: 'a.test=nowhere' })).toThrow(/DNS_HOSTS/);
  });

  it('reads the port lists, and names a bad entry', () => {
    expect(loadConfig({}).filter.allowedPorts).toEqual(['80', '443', '1024-65535']);
    expect(loadConfig({}).filter.blockedPorts).toBeUndefined();
    const config = loadConfig({ URL_FILTER_ALLOWED_PORTS: '443, 8000-8999', URL_FILTER_BLOCKED_PORTS: '8080' });
    expect(config.filter.allowedPorts).toEqual(['443', '8000-8999']);
    expect(config.filter.blockedPorts).toEqual(['8080']);
    // No value lets every infrastructure port through at once.
    expect(() => loadConfig({ URL_FILTER_BLOCKED_PORTS: 'none' })).toThrow(/URL_FILTER_BLOCKED_PORTS.*"none" is not a port or a range.*cannot be emptied/);
    expect(() => loadConfig({ URL_FILTER_ALLOWED_PORTS: '80,http' })).toThrow(/URL_FILTER_ALLOWED_PORTS.*"http" is not a port or range/);
    expect(() => loadConfig({ URL_FILTER_ALLOWED_PORTS: '9000-8000' })).toThrow(/URL_FILTER_ALLOWED_PORTS/);
    expect(() => loadConfig({ URL_FILTER_BLOCKED_PORTS: '0' })).toThrow(/URL_FILTER_BLOCKED_PORTS.*"0" is not a port or a range/);
  });

  it('reads the per-IP allowance settings, keeping the base rule for a few domains by default, and names a bad range', () => {
    expect(loadConfig({}).frontier).toMatchObject({ perIpDomainsPerStep: 20, perIpMaxScale: 16, perIpCdnCidrs: [], perIpStrictCidrs: [] });
    const config = loadConfig({ FRONTIER_PER_IP_CDN_CIDRS: '104.16.0.0/13, 2606:4700::/32', FRONTIER_PER_IP_STRICT_CIDRS: '203.0.113.7/32' });
    expect(config.frontier.perIpCdnCidrs).toEqual(['104.16.0.0/13', '2606:4700::/32']);
    expect(config.frontier.perIpStrictCidrs).toEqual(['203.0.113.7/32']);
    expect(() => loadConfig({ FRONTIER_PER_IP_CDN_CIDRS: '104.16.0.0' })).toThrow(/FRONTIER_PER_IP_CDN_CIDRS.*"104.16.0.0" is not a CIDR/);
    expect(() => loadConfig({ FRONTIER_PER_IP_MAX_SCALE: '0' })).toThrow(/FRONTIER_PER_IP_MAX_SCALE/);
  });

  it('merges a hosts(5) file under the explicit pairs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    const file = join(dir, 'hosts');
    writeFileSync(file, '# test web\n127.0.0.1 a.test b.test\n127.0.0.2 c.test # trailing\n');
    const config = loadConfig({ DNS_HOSTS_FILE: file, DNS_HOSTS: 'c.test=127.0.0.9' });
    expect(config.dns.hosts).toEqual({ 'a.test': '127.0.0.1', 'b.test': '127.0.0.1', 'c.test': '127.0.0.9' });
    expect(() => loadConfig({ DNS_HOSTS_FILE: join(dir, 'missing') })).toThrow(/DNS_HOSTS_FILE/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('parses hosts files leniently', () => {
    expect(parseHostsFile('\n  \n::1 localhost6\n')).toEqual({ localhost6: '::1' });
  });

  it('answers a name on two lines of a hosts file with the first, as the system resolver does', () => {
    expect(parseHostsFile('127.0.0.1 a.test\n127.0.0.2 A.test b.test\n127.0.0.3 b.test\n')).toEqual({ 'a.test': '127.0.0.1', 'b.test': '127.0.0.2' });
  });
});

describe('docs/configuration.md', () => {
  it('documents every variable', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/configuration.md'), 'utf8');
    expect(Object.keys(ENV_NAMES).filter((name) => !doc.includes(`| \`${name}\` |`))).toEqual([]);
  });

  it('checks the control plane token without ever printing it, and reads it from a file', () => {
    const short = (() => {
      try {
        loadConfig({ CONTROL_PLANE_TOKEN: 'secret-ish' });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(short).toMatch(/CONTROL_PLANE_TOKEN: is too short.*\(got "\(hidden\)"\)/);
    expect(short).not.toContain('secret-ish');
    expect(() => loadConfig({ CONTROL_PLANE_TOKEN: 'has spaces in the middle of it' })).toThrow(/printable ASCII/);
    expect(() => loadConfig({ CONTROL_PLANE_PROTECT_READS: 'true' })).toThrow(/CONTROL_PLANE_PROTECT_READS: needs CONTROL_PLANE_TOKEN/);
    expect(() => loadConfig({ BIND_ADDRESS: 'localhost' })).toThrow(/BIND_ADDRESS: is not an IP address/);
    const file = join(mkdtempSync(join(tmpdir(), 'token-')), 'token');
    writeFileSync(file, '  0123456789abcdef0123\n');
    expect(loadConfig({ CONTROL_PLANE_TOKEN_FILE: file }).controlPlane.token).toBe('0123456789abcdef0123');
    expect(() => loadConfig({ CONTROL_PLANE_TOKEN_FILE: file, CONTROL_PLANE_TOKEN: 'x'.repeat(20) })).toThrow(/not both/);
    writeFileSync(file, 'short');
    expect(() => loadConfig({ CONTROL_PLANE_TOKEN_FILE: file })).toThrow(/CONTROL_PLANE_TOKEN_FILE: the token in .* is too short/);
    rmSync(dirname(file), { recursive: true });
  });

  it('checks DOWNLOADER_PROXY_URL without printing its credentials', () => {
    expect(loadConfig({ DOWNLOADER_PROXY_URL: 'http://crawler:s3cret@proxy.internal:3128' }).downloader.proxyUrl).toBe('http://crawler:s3cret@proxy.internal:3128');
    for (const [url, problem] of [
      ['https://crawler:s3cret@proxy.internal:3128', /DOWNLOADER_PROXY_URL: a proxy reached over TLS \(https:\/\/\) is not supported yet.*\(got "\(hidden\)"\)/],
      ['socks5://crawler:s3cret@proxy.internal:1080', /DOWNLOADER_PROXY_URL: must be an http:\/\/ URL/],
    ] as const) {
      const message = (() => {
        try {
          loadConfig({ DOWNLOADER_PROXY_URL: url });
        } catch (error) {
          return (error as Error).message;
        }
      })();
      expect(message).toMatch(problem);
      expect(message).not.toContain('s3cret');
    }
  });
});

describe('CONTENT_CODEC', () => {
  /** `test` as on a Node.js without zstd (20): where zlib has it, it is taken away for the call. */
  const withoutZstd = (test: () => void) => {
    const zstd = zlib as { zstdCompressSync?: unknown };
    const built = zstd.zstdCompressSync;
    zstd.zstdCompressSync = undefined;
    try {
      test();
    } finally {
      zstd.zstdCompressSync = built;
    }
  };

  it('takes auto (the default), gzip or zstd, with a level for each, and refuses any other codec by name', () => {
    expect(loadConfig({}).storage).toMatchObject({ codec: 'auto', gzipLevel: 3, zstdLevel: 3 });
    expect(loadConfig({ CONTENT_CODEC: 'gzip', CONTENT_GZIP_LEVEL: '6' }).storage).toMatchObject({ codec: 'gzip', gzipLevel: 6 });
    expect(() => loadConfig({ CONTENT_CODEC: 'brotli' })).toThrow(/CONTENT_CODEC/);
    expect(() => loadConfig({ CONTENT_ZSTD_LEVEL: '20' })).toThrow(/CONTENT_ZSTD_LEVEL/);
    expect(() => loadConfig({ CONTENT_ZSTD_LEVEL: '0' })).toThrow(/CONTENT_ZSTD_LEVEL/);
  });

  it('takes zstd where Node.js has it built in', () => {
    if (zstdBuiltIn()) expect(loadConfig({ CONTENT_CODEC: 'zstd', CONTENT_ZSTD_LEVEL: '19' }).storage).toMatchObject({ codec: 'zstd', zstdLevel: 19 });
    else expect(() => loadConfig({ CONTENT_CODEC: 'zstd' })).toThrow(/CONTENT_CODEC/);
  });

  it('refuses zstd at start on a Node.js without it, naming the setting and the Node.js it needs (taken away for the test where it is built in)', () =>
    withoutZstd(() => {
      expect(() => loadConfig({ CONTENT_CODEC: 'zstd' })).toThrow(
        /CONTENT_CODEC: zstd needs Node\.js 22\.15 or later \(zlib\.zstdCompress\), this is v[\d.]+: set gzip or auto/,
      );
      expect(loadConfig({ CONTENT_CODEC: 'auto' }).storage.codec).toBe('auto');
    }));
});

describe("docs/operations.md's scaling table", () => {
  it('names settings that exist, with their defaults', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/operations.md'), 'utf8');
    const table = doc.slice(doc.indexOf('| Service | Scales how |'), doc.indexOf('\n\n', doc.indexOf('| Service | Scales how |')));
    const knobs = [...table.matchAll(/`([A-Z][A-Z0-9_]+)` \((\d+)\)/g)].map(([, name, value]) => ({ name, value: Number(value) }));
    expect(knobs.length).toBeGreaterThanOrEqual(9);
    const defaults = loadConfig({});
    const read = (name: string) => ENV_NAMES[name as keyof typeof ENV_NAMES].split('.').reduce<any>((node, key) => node?.[key], defaults);
    for (const { name, value } of knobs) expect({ name, value }).toEqual({ name, value: read(name) });
  });
});
