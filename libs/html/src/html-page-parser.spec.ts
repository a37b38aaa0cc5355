import { parseHtmlPage } from './html-page-parser';

const PAGE = `<!DOCTYPE html>
<html lang="en-GB" class="no-js">
<head>
  <meta charset="utf-8">
  <title>
    Fish &amp; Chips   —
    a   history
  </title>
  <base href=" https://cdn.example.com/docs/ ">
  <base href="https://ignored.example.com/">
  <link rel="stylesheet" href="/css/site.css">
  <link rel="Canonical" href="https://example.com/fish-and-chips">
  <link rel="alternate" hreflang="fr" href="/fr/">
  <meta name="Robots" content="NOINDEX, follow">
  <meta name="googlebot" content="nofollow">
  <style>body { font-family: "Secret Style Text"; }</style>
  <script>var hidden = "<a href='/from-script'>Secret Script Text</a>";</script>
</head>
<body>
  <header><nav><a href="/">Home</a> | <a href="/menu?item=cod&amp;size=large">Menu</a></nav></header>
  <svg><title>Icon tooltip</title><a href="/svg-link"><text>Icon</text></a></svg>
  <h1>Fish &amp; chips</h1>
  <p>First fried in <b>London</b> in the 1860s.</p><p>Still popular.</p>
  <map name="m"><area shape="rect" coords="0,0,1,1" href="/area" alt=""></map>
  <a href="https://other.example.org/x" rel="NoFollow  UGC">Sponsored</a>
  <a name="anchor-only">no href</a>
  <a href="">self</a>
  <iframe src="/embed/video"></iframe>
  <noscript>Secret Noscript Text <a href="/noscript-link">n</a></noscript>
  <template><p>Secret Template Text</p></template>
  <frameset><frame src="/frame-a"></frameset>
</body>
</html>`;

describe('parseHtmlPage', () => {
  const parsed = parseHtmlPage(PAGE);

  it('extracts title, lang, base href, canonical and meta robots', () => {
    expect(parsed.title).toBe('Fish & Chips — a history');
    expect(parsed.lang).toBe('en-GB');
    expect(parsed.baseHref).toBe('https://cdn.example.com/docs/');
    expect(parsed.canonical).toBe('https://example.com/fish-and-chips');
    // name=googlebot is not read: only name=robots addresses every crawler.
    expect(parsed.metaRobots).toEqual({ noindex: true, nofollow: false });
  });

  it('extracts links in document order, raw, with normalised rel on a/area/link', () => {
    expect(parsed.links).toEqual([
      { href: '/css/site.css', tag: 'link', rel: 'stylesheet' },
      { href: 'https://example.com/fish-and-chips', tag: 'link', rel: 'canonical' },
      { href: '/fr/', tag: 'link', rel: 'alternate' },
      { href: '/', tag: 'a' },
      { href: '/menu?item=cod&size=large', tag: 'a' },
      { href: '/svg-link', tag: 'a' },
      { href: '/area', tag: 'area' },
      { href: 'https://other.example.org/x', tag: 'a', rel: 'nofollow ugc' },
      { href: '/embed/video', tag: 'iframe' },
      { href: '/noscript-link', tag: 'a' },
      { href: '/frame-a', tag: 'frame' },
    ]);
    expect(parsed.linksTruncated).toBe(false);
  });

  it('keeps only visible text, with words separated at block boundaries', () => {
    expect(parsed.text).toBe('Home | Menu Icon Fish & chips First fried in London in the 1860s. Still popular. Sponsored no href self');
    for (const secret of ['Secret', 'hidden', 'Icon tooltip', 'a history']) expect(parsed.text).not.toContain(secret);
  });

  it('joins inline elements without inventing spaces', () => {
    expect(parseHtmlPage('<p>W<b>or</b>d</p><div>next</div>line<br>break').text).toBe('Word next line break');
  });

  it('caps links at maxLinks, default 5000', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `<a href="/p${i}">${i}</a>`).join('');
    const three = parseHtmlPage(many(10), { maxLinks: 3 });
    expect(three.links.map((l) => l.href)).toEqual(['/p0', '/p1', '/p2']);
    expect(three.linksTruncated).toBe(true);
    const capped = parseHtmlPage(many(6000));
    expect(capped.links).toHaveLength(5000);
    expect(capped.links[4999].href).toBe('/p4999');
    expect(() => parseHtmlPage('', { maxLinks: -1 })).toThrow(RangeError);
  });

  it('finds the canonical link even beyond maxLinks', () => {
    const html = '<a href="/a">a</a><a href="/b">b</a><link rel="canonical" href="/c">';
    expect(parseHtmlPage(html, { maxLinks: 1 }).canonical).toBe('/c');
  });

  it('reads meta robots none, several tags, and space-separated tokens', () => {
    expect(parseHtmlPage('<meta name="robots" content="None">').metaRobots).toEqual({ noindex: true, nofollow: true });
    const two = '<meta name=robots content=noindex><meta name=robots content="nofollow">';
    expect(parseHtmlPage(two).metaRobots).toEqual({ noindex: true, nofollow: true });
    expect(parseHtmlPage('<meta name=robots content="noindex nofollow">').metaRobots).toEqual({
      noindex: true,
      nofollow: true,
    });
    expect(parseHtmlPage('<meta name=robots content="index, follow, max-snippet:-1">').metaRobots).toEqual({
      noindex: false,
      nofollow: false,
    });
  });

  it('limits the title to 1000 characters and omits empty values', () => {
    expect(parseHtmlPage(`<title>${'word '.repeat(400)}</title>`).title).toHaveLength(999); // trailing space trimmed
    const empty = parseHtmlPage('<html lang=" "><title>  </title><base href=""><base href="/second">');
    expect([empty.title, empty.lang, empty.baseHref]).toEqual([undefined, undefined, undefined]);
  });

  it('keeps an href longer than a message carries cut to 8,192 characters, with its length, to be counted as filtered', () => {
    const long = `/${'x'.repeat(9000)}`;
    const parsed = parseHtmlPage(`<a href=" ${long} ">x</a><link rel=canonical href="${long}"><a href="/ok">ok</a><img src="${long}">`, { images: true });
    expect(parsed.links).toEqual([
      { href: long.slice(0, 8192), tag: 'a', length: 9001 },
      { href: long.slice(0, 8192), tag: 'link', rel: 'canonical', length: 9001 },
      { href: '/ok', tag: 'a' },
      { href: long.slice(0, 8192), tag: 'img', length: 9001 },
    ]);
    // A cut href names no page: not the canonical one.
    expect(parsed.canonical).toBeUndefined();
    expect(parseHtmlPage(`<a href="/${'y'.repeat(8191)}">x</a>`).links).toEqual([{ href: `/${'y'.repeat(8191)}`, tag: 'a' }]);
  });

  it('collects <img src> only when asked, after the other links and on a budget of its own', () => {
    const html = '<img src="/a.png"><a href="/one">1</a><img src=" /b.png "><img><img src=""><a href="/two">2</a>';
    expect(parseHtmlPage(html).links).toEqual([
      { href: '/one', tag: 'a' },
      { href: '/two', tag: 'a' },
    ]);
    expect(parseHtmlPage(html, { images: true }).links).toEqual([
      { href: '/one', tag: 'a' },
      { href: '/two', tag: 'a' },
      { href: '/a.png', tag: 'img' },
      { href: '/b.png', tag: 'img' },
    ]);
    // The page links kept do not depend on how many images come first.
    const many = `${'<img src="/i.png">'.repeat(5)}<a href="/one">1</a><a href="/two">2</a>`;
    expect(parseHtmlPage(many, { maxLinks: 2, images: true }).links).toEqual([
      { href: '/one', tag: 'a' },
      { href: '/two', tag: 'a' },
      { href: '/i.png', tag: 'img' },
      { href: '/i.png', tag: 'img' },
    ]);
  });

  describe('malformed HTML', () => {
    it.each([
      ['unclosed tags', '<html><body><div><p>one<p>two<ul><li>three<table><td>four'],
      ['an attribute cut off at EOF', '<p>before</p><a href='],
      ['an unterminated quoted href', '<a href="/x>text</a><a href="/y">y</a>'],
      ['an unclosed title', '<title>Runaway <b>title'],
      ['an unclosed comment', 'text <!-- comment <a href="/c">'],
      ['an unclosed script', '<p>shown</p><script>if (a < b) { document.write("<a href=/s>")'],
      ['stray closing tags', '</div></p></a></html><p>ok</p></body>'],
      ['garbage bytes', '\u0000\uFFFD\uD800<\u0001a href=\u0002>\u001B[31m<<<>>>&#xFFFFFFFF;&bogus;'],
      ['empty input', ''],
    ])('does not throw on %s', (_, html) => {
      const r = parseHtmlPage(html);
      expect(typeof r.text).toBe('string');
      expect(Array.isArray(r.links)).toBe(true);
    });

    it('reads a page of 200,000 nested unclosed tags in time linear in its size, links and text after them too', () => {
      // Each open tag used to cost time in the depth: this page took ~10 s, a parser thread held hostage.
      const deep = '<div>'.repeat(200_000);
      const started = performance.now();
      const r = parseHtmlPage(`<title>T</title>${deep}<a href="/inside">in</a>${'</div>'.repeat(200_000)}<p>after</p>`);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(r.title).toBe('T');
      expect(r.links).toEqual([{ href: '/inside', tag: 'a' }]);
      expect(r.text).toBe('in after');
    });

    it('is not held by 100,000 nested svg elements either', () => {
      const started = performance.now();
      const r = parseHtmlPage(`${'<svg>'.repeat(100_000)}<a href="/x">x</a>`);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(r.links).toEqual([{ href: '/x', tag: 'a' }]);
    });

    it('still recovers what it can', () => {
      expect(parseHtmlPage('<a href="/x">x<a href=').links).toEqual([{ href: '/x', tag: 'a' }]);
      expect(parseHtmlPage('<title>Runaway <b>title').title).toBe('Runaway <b>title');
      expect(parseHtmlPage('<p>shown</p><script>if (a < b) {').text).toBe('shown');
    });

    it('does not throw on random tag soup', () => {
      const pieces = [
        '<a href="',
        '<',
        '>',
        '"',
        "'",
        '=',
        '/',
        '<!--',
        '-->',
        '<script>',
        '</script>',
        '<title>',
        '<svg>',
        '</svg>',
        '<noscript>',
        '&amp;',
        '&#',
        'x',
        ' ',
        '\n',
        '<base href=',
        '<meta name=robots content=',
      ];
      let seed = 42;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      for (let i = 0; i < 300; i++) {
        let html = '';
        for (let j = 0; j < 60; j++) html += pieces[Math.floor(next() * pieces.length)];
        expect(() => parseHtmlPage(html, { maxLinks: 5 })).not.toThrow();
      }
    });
  });
});
