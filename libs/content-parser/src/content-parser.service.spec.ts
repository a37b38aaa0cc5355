import * as iconv from 'iconv-lite';
import { loadConfig } from '@crawler/config';
import { FetchedPage, ParsedPage, SCHEMA_VERSION } from '@crawler/contracts';
import { hammingDistance } from '@crawler/simhash';
import { ContentParserService } from './content-parser.service';

function fetched(headers: Record<string, string> = { 'content-type': 'text/html' }): FetchedPage {
  return {
    v: SCHEMA_VERSION,
    fetchId: 'f1',
    url: 'http://site.test/page',
    depth: 1,
    status: 200,
    headers,
    contentType: headers['content-type'] ?? '',
    bodyKey: 'staging/f1-x',
    length: 0,
    truncated: false,
    fetchedAt: '2024-01-01T00:00:00.000Z',
  };
}

function parser(overrides: Record<string, unknown> = {}) {
  return new ContentParserService(loadConfig({}, overrides));
}

function parsed(body: Buffer | string, headers?: Record<string, string>, overrides?: Record<string, unknown>): ParsedPage {
  const result = parser(overrides).parse(fetched(headers), Buffer.isBuffer(body) ? body : Buffer.from(body));
  if (!result.ok) throw new Error(`rejected: ${result.reason}`);
  return result.page;
}

describe('ContentParserService', () => {
  it('collects <img> links only while a plugin is enabled', () => {
    const html = '<html><body><img src="/logo.png"><a href="/next">next</a></body></html>';
    expect(parsed(html).links).toEqual([{ href: '/next', tag: 'a' }]);
    expect(parsed(html, undefined, { 'plugins.enabled': ['png'] }).links).toEqual([
      { href: '/next', tag: 'a' },
      { href: '/logo.png', tag: 'img' },
    ]);
  });

  it('rejects an empty body', () => {
    expect(parser().parse(fetched(), Buffer.alloc(0))).toEqual({ ok: false, reason: 'empty' });
  });

  it('rejects a body with NUL bytes as binary', () => {
    const body = Buffer.concat([Buffer.from('<html><body>'), Buffer.from([0x00, 0x01, 0x02]), Buffer.from('</body></html>')]);
    expect(parser().parse(fetched(), body)).toEqual({ ok: false, reason: 'binary' });
  });

  it('looks for NUL bytes in the first KiB only', () => {
    const body = Buffer.concat([Buffer.from(`<html><title>t</title><body>${'a'.repeat(2000)}`), Buffer.from([0])]);
    expect(parser().parse(fetched(), body).ok).toBe(true);
  });

  it('does not take a UTF-16LE page with a BOM for binary', () => {
    const html = '<html><head><title>Grüße</title></head><body><a href="/x">x</a></body></html>';
    const body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(html, 'utf16le')]);
    expect(body.includes(0)).toBe(true);
    const page = parsed(body);
    expect(page).toMatchObject({ charset: 'UTF-16LE', charsetSource: 'bom', title: 'Grüße' });
    expect(page.links).toEqual([{ href: '/x', tag: 'a' }]);
  });

  it('does not take a UTF-16BE page with a BOM for binary', () => {
    const html = '<html><title>Hi</title></html>';
    const le = Buffer.from(html, 'utf16le');
    const be = Buffer.alloc(le.length);
    for (let i = 0; i < le.length; i += 2) (be[i] = le[i + 1]), (be[i + 1] = le[i]);
    expect(parsed(Buffer.concat([Buffer.from([0xfe, 0xff]), be]))).toMatchObject({ charset: 'UTF-16BE', title: 'Hi' });
  });

  it('decodes a windows-1251 page by the charset of its Content-Type header', () => {
    const body = iconv.encode('<html><head><title>Привет, мир</title></head><body><p>Война и мир</p></body></html>', 'windows-1251');
    const page = parsed(body, { 'content-type': 'text/html; charset=windows-1251' });
    expect(page).toMatchObject({ title: 'Привет, мир', charset: 'windows-1251', charsetSource: 'http' });
  });

  it('falls back to the meta charset when the header has none', () => {
    const body = iconv.encode('<html><head><meta charset="koi8-r"><title>Привет</title></head></html>', 'koi8-r');
    expect(parsed(body, { 'content-type': 'text/html' })).toMatchObject({ title: 'Привет', charset: 'KOI8-R', charsetSource: 'meta' });
  });

  it('sets nofollow from meta robots and noindex from X-Robots-Tag', () => {
    const page = parsed('<html><head><meta name="robots" content="nofollow"><title>t</title></head></html>', {
      'content-type': 'text/html',
      'x-robots-tag': 'noindex',
    });
    expect(page).toMatchObject({ noindex: true, nofollow: true });
  });

  it('leaves both flags off when nothing forbids', () => {
    expect(parsed('<html><head><meta name="robots" content="index, follow"></head></html>')).toMatchObject({ noindex: false, nofollow: false });
  });

  it('reads meta robots noindex and X-Robots-Tag nofollow / none too', () => {
    expect(parsed('<meta name="ROBOTS" content="NOINDEX">')).toMatchObject({ noindex: true, nofollow: false });
    expect(parsed('<p>x</p>', { 'content-type': 'text/html', 'x-robots-tag': 'nofollow' })).toMatchObject({ noindex: false, nofollow: true });
    expect(parsed('<p>x</p>', { 'content-type': 'text/html', 'x-robots-tag': 'none' })).toMatchObject({ noindex: true, nofollow: true });
  });

  it('ignores X-Robots-Tag directives addressed to another crawler', () => {
    expect(parsed('<p>x</p>', { 'content-type': 'text/html', 'x-robots-tag': 'googlebot: noindex, nofollow' })).toMatchObject({
      noindex: false,
      nofollow: false,
    });
  });

  it('carries the raw links, base href, canonical, title and lang, and keeps the fetched fields', () => {
    const html = `<html lang="en"><head><base href="http://cdn.site.test/base/"><title>  The   title </title>
      <link rel="Canonical" href="/canonical"></head>
      <body><a href="a.html" rel="NoFollow">a</a><area href="/map"><iframe src="/frame"></iframe><a href="">self</a></body></html>`;
    const page = parsed(html, { 'content-type': 'text/html; charset=utf-8', etag: '"e"' });
    expect(page).toMatchObject({
      v: SCHEMA_VERSION,
      fetchId: 'f1',
      url: 'http://site.test/page',
      depth: 1,
      bodyKey: 'staging/f1-x',
      headers: { 'content-type': 'text/html; charset=utf-8', etag: '"e"' },
      title: 'The title',
      lang: 'en',
      baseHref: 'http://cdn.site.test/base/',
      canonical: '/canonical',
      charset: 'UTF-8',
      charsetSource: 'http',
    });
    expect(page.links).toEqual([
      { href: '/canonical', tag: 'link', rel: 'canonical' },
      { href: 'a.html', tag: 'a', rel: 'nofollow' },
      { href: '/map', tag: 'area' },
      { href: '/frame', tag: 'iframe' },
    ]);
  });

  it('keeps at most parser.maxLinks links', () => {
    const html = Array.from({ length: 10 }, (_, i) => `<a href="/l${i}">${i}</a>`).join('');
    expect(parsed(html, undefined, { 'parser.maxLinks': 3 }).links.map((l) => l.href)).toEqual(['/l0', '/l1', '/l2']);
  });

  it('hashes the text: 64 hex, equal for bodies that differ only in whitespace and markup around it', () => {
    const a = parsed('<html><head><title>T</title></head><body><p>Hello world</p><p>Second paragraph</p></body></html>');
    const b = parsed('<html>\n  <head><title>T</title></head>\n<body>\n\n  <p>Hello\n\t  world</p>\n  <p>  Second   paragraph </p>\n</body></html>\n');
    const c = parsed('<html><head><title>T</title></head><body><p>Hello world</p><p>Other paragraph</p></body></html>');
    expect(a.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(b.contentHash).toBe(a.contentHash);
    expect(c.contentHash).not.toBe(a.contentHash);
  });

  it('hashes the decoded text, so one page in two encodings has one hash', () => {
    const html = '<html><body><p>Привет, мир</p></body></html>';
    const utf8 = parsed(Buffer.from(html), { 'content-type': 'text/html; charset=utf-8' });
    const cp1251 = parsed(iconv.encode(html, 'windows-1251'), { 'content-type': 'text/html; charset=windows-1251' });
    expect(cp1251.contentHash).toBe(utf8.contentHash);
  });

  it('simhashes the visible text: 16 hex, equal across markup and whitespace, a few bits off for one changed word, far for another page', () => {
    const sentences = (changed: string) =>
      Array.from({ length: 40 }, (_, i) => `<p>Paragraph ${i} tells how the crawler fetched page ${i * 7} of host ${i % 5} politely.</p>`)
        .join('\n')
        .replace('Paragraph 20 tells', `Paragraph 20 ${changed}`);
    const a = parsed(`<html><head><title>T</title><script>var x = 1;</script></head><body>${sentences('tells')}</body></html>`);
    const b = parsed(`<html>\n<body>\n  ${sentences('tells').replace(/<p>/g, '<div>  ').replace(/<\/p>/g, '</div>')}</body></html>`);
    const c = parsed(`<html><body>${sentences('explains')}</body></html>`);
    const other = parsed(
      `<html><body>${Array.from({ length: 40 }, (_, i) => `<p>Entirely different words number ${i * 3} about sitemaps and Bloom filters.</p>`).join('')}</body></html>`,
    );
    expect(a.simhash).toMatch(/^[0-9a-f]{16}$/);
    expect(b.simhash).toBe(a.simhash);
    expect(hammingDistance(a.simhash, c.simhash)).toBeLessThanOrEqual(3);
    expect(hammingDistance(a.simhash, other.simhash)).toBeGreaterThan(10);
  });

  describe('regressions', () => {
    it('obeys X-Robots-Tag directives addressed to our own user agent', () => {
      const page = parsed(
        '<p>x</p>',
        { 'content-type': 'text/html', 'x-robots-tag': 'test-bot: noindex' },
        {
          'downloader.userAgent': 'test-bot/1.0 (+http://127.0.0.1/about)',
        },
      );
      expect(page.noindex).toBe(true);
    });
  });
});
