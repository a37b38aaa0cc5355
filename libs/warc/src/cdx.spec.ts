import { getSurt } from 'warcio';
import { cdxjLine, cdxTimestamp, mimeOf, sortCdxj, surt } from './cdx';

describe('surt', () => {
  // Expected keys from the Python `surt` package's tests (what pywb uses), tests/test_surt.py.
  it.each([
    ['http://www.archive.org/', 'org,archive)/'],
    ['http://archive.org/', 'org,archive)/'],
    ['http://archive.org/goo/', 'org,archive)/goo'],
    ['http://archive.org/goo/?', 'org,archive)/goo'],
    ['http://archive.org/goo/?b&a', 'org,archive)/goo?a&b'],
    ['http://archive.org/goo/?a=2&b&a=1', 'org,archive)/goo?a=1&a=2&b'],
    ['http://www34.archive.org/index.html?b=a&b=b&a=b', 'org,archive)/index.html?a=b&b=a&b=b'],
    ['http://ARCHIVE.ORG/', 'org,archive)/'],
    ['http://www.archive.org:80/', 'org,archive)/'],
    ['https://www.archive.org:443/', 'org,archive)/'],
    ['http://www.archive.org:443/', 'org,archive:443)/'],
    ['http://archive.org/index.php?PHPSESSID=0123456789abcdefghijklemopqrstuv&action=profile;u=4221', 'org,archive)/index.php?action=profile;u=4221'],
    [
      'http://visit.webhosting.yahoo.com/visit.gif?&r=http%3A//web.archive.org/web/20090517140029/http%3A//anthonystewarthead.electric-chi.com/&b=Netscape%205.0%20%28Windows%3B%20en-US%29&s=1366x768&o=Win32&c=24&j=true&v=1.2',
      'com,yahoo,webhosting,visit)/visit.gif?&b=netscape%205.0%20(windows;%20en-us)&c=24&j=true&o=win32&r=http://web.archive.org/web/20090517140029/http://anthonystewarthead.electric-chi.com/&s=1366x768&v=1.2',
    ],
  ])('%s → %s', (url, key) => {
    expect(surt(url)).toBe(key);
  });

  it('drops user info and fragment, keeps a non-default port, lower-cases path and query', () => {
    expect(surt('http://user:pw@www.Example.com:8080/A/B/?Z=1&y=2#Frag')).toBe('com,example:8080)/a/b?y=2&z=1');
  });

  it('normalises escapes, dot segments and doubled slashes the way the canonicaliser does', () => {
    expect(surt('http://host.com//twoslashes?more//slashes')).toBe('com,host)/twoslashes?more//slashes');
    expect(surt('http://host/%25%32%35')).toBe('host)/%25');
    expect(surt('http://host/a/%2E%2E/b')).toBe('host)/b');
    expect(surt('http://host/ab%23cd')).toBe('host)/ab%23cd');
    expect(surt('http://example.com/caf\u00e9 x')).toBe('com,example)/caf%c3%a9%20x');
  });

  it('reverses IPv4 addresses too, and normalises their numeric forms', () => {
    expect(surt('http://127.0.0.1:8080/x')).toBe('1,0,0,127:8080)/x');
    expect(surt('http://3279880203/blah')).toBe('11,0,127,195)/blah');
  });

  it('converts IDN hosts to punycode', () => {
    expect(surt('http://B\u00fccher.ch:8080/')).toBe('ch,xn--bcher-kva:8080)/');
  });

  it('agrees with warcio.js getSurt where warcio implements the same rules', () => {
    for (const url of ['http://www.example.com/a/b.html?b=2&a=1', 'https://example.com/', 'http://sub.example.org:8080/x?y']) {
      expect(surt(url)).toBe(getSurt(url));
    }
  });

  it('returns non-http(s) and unparsable input unchanged', () => {
    expect(surt('dns:example.com')).toBe('dns:example.com');
    expect(surt('not a url')).toBe('not a url');
  });
});

describe('CDXJ lines', () => {
  it('are written as pywb writes them: key, timestamp, JSON with string status/length/offset', () => {
    const line = cdxjLine({
      url: 'http://www.example.com/page?b=1&a=2',
      date: '2024-01-02T03:04:05.678Z',
      mime: 'text/html',
      status: 200,
      digest: 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ',
      length: 512,
      offset: 1024,
      filename: 'crawl-20240102030405678-00000.warc.gz',
    });
    expect(line).toBe(
      'com,example)/page?a=2&b=1 20240102030405 {"url":"http://www.example.com/page?b=1&a=2","mime":"text/html","status":"200",' +
        '"digest":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","length":"512","offset":"1024","filename":"crawl-20240102030405678-00000.warc.gz"}',
    );
  });

  it('leave out what is unknown', () => {
    const line = cdxjLine({ url: 'http://a.example/', date: '2024-01-02T03:04:05Z', length: 1, offset: 0, filename: 'f.warc.gz' });
    expect(JSON.parse(line.slice(line.indexOf('{')))).toEqual({ url: 'http://a.example/', length: '1', offset: '0', filename: 'f.warc.gz' });
  });

  it('sort in byte order, key then timestamp', () => {
    expect(sortCdxj(['com,b)/ 2', 'com,a)/x 1', 'com,a)/ 3', 'com,a)/ 1', 'com,a)/\u00e9 0'])).toEqual([
      'com,a)/ 1',
      'com,a)/ 3',
      'com,a)/x 1',
      'com,a)/\u00e9 0',
      'com,b)/ 2',
    ]);
  });

  it('timestamps are the first 14 digits of the UTC date', () => {
    expect(cdxTimestamp('2024-12-31T23:59:59.999Z')).toBe('20241231235959');
    expect(cdxTimestamp('2025-01-01T01:00:00+02:00')).toBe('20241231230000');
  });

  it('mime drops parameters', () => {
    expect(mimeOf('text/html; charset=utf-8')).toBe('text/html');
    expect(mimeOf('')).toBeUndefined();
    expect(mimeOf(undefined)).toBeUndefined();
  });
});
