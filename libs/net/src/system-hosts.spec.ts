import { parseSystemHosts } from './system-hosts';

describe('parseSystemHosts', () => {
  it('gives each name every address, its IPv4 ones before its IPv6 ones, as the system resolver does', () => {
    const hosts = parseSystemHosts(
      ['127.0.0.1 localhost', '::1 localhost ip6-localhost', '10.0.0.5 db.internal DB.Internal.', '10.0.0.6 db.internal', 'fe80::1 only6'].join('\n'),
    );
    expect(Object.fromEntries(hosts)).toEqual({
      localhost: ['127.0.0.1', '::1'],
      'ip6-localhost': ['::1'],
      'db.internal': ['10.0.0.5', '10.0.0.6'],
      only6: ['fe80::1'],
    });
  });

  it('skips comments, blank lines and lines that do not start with an address', () => {
    const hosts = parseSystemHosts('# 1.2.3.4 commented\n\n   \nnot-an-ip name\n192.0.2.1\tTabbed  # note\n');
    expect(Object.fromEntries(hosts)).toEqual({ tabbed: ['192.0.2.1'] });
  });
});
