import { ConfigError, loadConfig } from '@crawler/config';

/** The resolver's settings as the environment gives them (libs/config owns the parsing; these are its dns.* rules). */
describe('dns configuration', () => {
  it('has defaults that keep the system resolver and refresh hot names', () => {
    const { dns } = loadConfig({});
    expect(dns).toMatchObject({ servers: [], timeoutMs: 2000, tries: 2, refreshAheadRatio: 0.2, allowCidrs: [] });
  });

  it('reads DNS_SERVERS, DNS_TIMEOUT_MS, DNS_TRIES, DNS_REFRESH_AHEAD_RATIO and DNS_ALLOW_CIDRS', () => {
    const { dns } = loadConfig({
      DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2 ,::1,[::1]:5353,[fd00::53]',
      DNS_TIMEOUT_MS: '250',
      DNS_TRIES: '3',
      DNS_REFRESH_AHEAD_RATIO: '0.5',
      DNS_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
    });
    expect(dns.servers).toEqual(['127.0.0.1:5353', '10.0.0.2', '::1', '[::1]:5353', '[fd00::53]']);
    expect(dns).toMatchObject({ timeoutMs: 250, tries: 3, refreshAheadRatio: 0.5, allowCidrs: ['127.0.0.0/8', '::1/128'] });
  });

  it('takes lists from flags (arrays) too', () => {
    expect(loadConfig({}, { 'dns.servers': ['127.0.0.1:53'], 'dns.allowCidrs': ['10.0.0.0/8'] }).dns).toMatchObject({
      servers: ['127.0.0.1:53'],
      allowCidrs: ['10.0.0.0/8'],
    });
  });

  it.each([
    ['DNS_SERVERS', 'dns.example.com', /DNS_SERVERS: "dns\.example\.com" is not IP, IP:PORT or \[IPv6\]:PORT \(got "dns\.example\.com"\)/],
    ['DNS_SERVERS', '127.0.0.1:99999', /DNS_SERVERS: "127\.0\.0\.1:99999"/],
    ['DNS_SERVERS', '127.0.0.1:0', /DNS_SERVERS: "127\.0\.0\.1:0"/],
    ['DNS_SERVERS', '[127.0.0.1]:53', /DNS_SERVERS: "\[127\.0\.0\.1\]:53"/],
    ['DNS_SERVERS', '1.2.3:53', /DNS_SERVERS: "1\.2\.3:53"/],
    ['DNS_ALLOW_CIDRS', '127.0.0.1', /DNS_ALLOW_CIDRS: "127\.0\.0\.1" is not a CIDR/],
    ['DNS_ALLOW_CIDRS', '10.0.0.0/33', /DNS_ALLOW_CIDRS: "10\.0\.0\.0\/33"/],
    ['DNS_ALLOW_CIDRS', '::1/129', /DNS_ALLOW_CIDRS: "::1\/129"/],
    ['DNS_ALLOW_CIDRS', 'localhost/8', /DNS_ALLOW_CIDRS: "localhost\/8"/],
    ['DNS_TIMEOUT_MS', '0', /DNS_TIMEOUT_MS/],
    ['DNS_TRIES', '0', /DNS_TRIES/],
    ['DNS_REFRESH_AHEAD_RATIO', '1', /DNS_REFRESH_AHEAD_RATIO/],
    ['DNS_REFRESH_AHEAD_RATIO', '-0.1', /DNS_REFRESH_AHEAD_RATIO/],
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('names every bad entry of a list', () => {
    expect(() => loadConfig({ DNS_SERVERS: '127.0.0.1,nope,8.8.8.8:x' })).toThrow(/"nope".*\n.*"8\.8\.8\.8:x"/);
  });
});
