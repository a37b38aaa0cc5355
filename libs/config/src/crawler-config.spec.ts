import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, ENV_NAMES, loadConfig, parseHostsFile } from './crawler-config';

describe('loadConfig', () => {
  it('gives polite defaults', () => {
    const config = loadConfig({});
    expect(config.frontier.minDelayMs).toBeGreaterThanOrEqual(1000);
    expect(config.dns.allowPrivate).toBe(false);
    expect(config.redisUrl).toBeUndefined();
    expect(config.downloader.maxBodyBytes).toBe(256 * 1024);
  });

  it('reads service knobs from prefixed variables and flags override them', () => {
    const config = loadConfig(
      { DNS_HOSTS: 'a.test=127.0.0.1, b.test=::1', URL_FILTER_SCOPE: 'any', DNS_ALLOW_PRIVATE: 'true' },
      { 'filter.scope': 'host' },
    );
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
    expect(() => loadConfig({ FRONTIER_LEASE_MS: '30000', DOWNLOADER_TOTAL_TIMEOUT_MS: '60000' })).toThrow(/FRONTIER_LEASE_MS: must be longer than DOWNLOADER_TOTAL_TIMEOUT_MS/);
  });

  it('refuses a static answer that is not an address', () => {
    expect(() => loadConfig({ DNS_HOSTS: 'a.test=nowhere' })).toThrow(/DNS_HOSTS/);
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
});

describe('docs/configuration.md', () => {
  it('documents every variable', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/configuration.md'), 'utf8');
    expect(Object.keys(ENV_NAMES).filter((name) => !doc.includes(`| \`${name}\` |`))).toEqual([]);
  });
});
