/**
 * A fixed corpus for the parser's output-equivalence test: pages of the benchmark's web (BenchWeb with a fixed
 * seed, so sizes, markup and links are spread as the benchmark spreads them), its small error and redirect
 * pages, and hand-written tricky pages (entities, unclosed tags, svg titles, links in noscript and template,
 * charset declarations right and wrong, CJK and Thai text, case mappings that change a string's length).
 */
import { SCHEMA_VERSION, type FetchedPage } from '@crawler/contracts';
import * as iconv from 'iconv-lite';
import { BenchWeb } from '../../bench/web/bench-web';

export interface CorpusPage {
  name: string;
  fetched: FetchedPage;
  body: Buffer;
}

const PORT = 8080;
const SEED = 21;

/** Every page, in a fixed order. */
export function parseCorpus(): CorpusPage[] {
  return [...benchPages(), ...trickyPages()];
}

function fetched(url: string, headers: Record<string, string>): FetchedPage {
  return {
    v: SCHEMA_VERSION,
    fetchId: 'corpus',
    url,
    depth: 1,
    status: 200,
    headers,
    contentType: headers['content-type'] ?? 'text/html',
    bodyKey: 'staging/corpus',
    length: 0,
    truncated: false,
    fetchedAt: '2024-01-01T00:00:00.000Z',
  };
}

/**
 * The benchmark's real-shaped pages (3 hosts × 100), a few of its simple shape, and its error pages; the
 * headers vary so that every charset source and the X-Robots-Tag header are exercised.
 */
function benchPages(): CorpusPage[] {
  const pages: CorpusPage[] = [];
  const add = (web: BenchWeb, host: string, path: string) => {
    const i = pages.length;
    const headers: Record<string, string> = {
      'content-type': i % 10 === 0 ? 'text/html' : i % 10 === 1 ? 'text/html; charset=windows-1252' : web.reply(host, path)!.contentType,
    };
    if (i % 17 === 0) headers['x-robots-tag'] = 'noindex';
    if (i % 23 === 0) headers['x-robots-tag'] = 'test-bot: nofollow';
    pages.push({ name: `${web.shape}/${host}${path}`, fetched: fetched(`http://${host}:${PORT}${path}`, headers), body: web.reply(host, path)!.body });
  };
  const real = new BenchWeb({ hosts: 3, pagesPerHost: 100, port: PORT, shape: 'real', seed: SEED });
  for (const host of real.hosts) for (let p = 0; p < real.pagesPerHost; p++) add(real, host.name, p === 0 ? '/' : `/p/${p}`);
  for (const path of ['/r/1', '/missing/2', '/err/3', '/private/4']) add(real, real.hosts[0].name, path);
  const simple = new BenchWeb({ hosts: 1, pagesPerHost: 10, port: PORT, shape: 'simple', seed: SEED });
  for (let p = 0; p < simple.pagesPerHost; p++) add(simple, simple.hosts[0].name, p === 0 ? '/' : `/p/${p}`);
  return pages;
}

const UTF8 = { 'content-type': 'text/html; charset=utf-8' };
const NO_CHARSET = { 'content-type': 'text/html' };

function trickyPages(): CorpusPage[] {
  const page = (name: string, body: Buffer | string, headers: Record<string, string> = UTF8): CorpusPage => ({
    name: `tricky/${name}`,
    fetched: fetched(`http://tricky.test/${name}`, headers),
    body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
  });
  const cyrillic = 'Лев Николаевич Толстой родился в Ясной Поляне. Все счастливые семьи похожи друг на друга.';
  const japanese = '吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。';
  // A body cut off by the size cap inside a character (the last of 日本語: three bytes, two kept).
  const whole = Buffer.from(`<title>Coupé</title><p>Texte coupé au milieu d'un caractère: 日本語</p>`);
  const truncated = whole.subarray(0, whole.length - 1);
  return [
    page(
      'entities',
      '<!doctype html><title>Caf&eacute; &amp; Bar &#x1F600; &notanentity; &amp</title>' +
        '<p>A&nbsp;B &lt;tag&gt; &#0; &#xD800; &copy2024 &AMP; &#128512;s &#x80;</p>' +
        '<a href="/q?a=1&amp;b=2&copy=3&lang=en">q</a><a href="&#x2F;slash&#47;ed">s</a><a href="/e?x=&quot;y&quot;">e</a>',
    ),
    page(
      'unclosed',
      "<html lang=fr><head><title>Ouvert</title><body><p>un<p>deux<div><a href=/u1>u1<a href='/u2'>u2<table><tr><td>cellule<td>autre</table>" +
        '<b><i>gras</b>italique</i><ul><li>a<li>b</ul><p>fin <a href="/u3" rel=nofollow>trois',
    ),
    page('unclosed-title', '<title>Never closed<p>so this is title <a href="/not-a-link">x</a>'),
    page('unclosed-script', '<title>S</title><p>before</p><script>var a = "</div>"; document.write("<a href=/in-script>")<a href=/after-script>'),
    page('attribute-cut-at-eof', '<title>EOF</title><p>text</p><a href="/ok">ok</a><a href="/eof'),
    page(
      'svg-math-titles',
      '<html><head></head><body><svg viewBox="0 0 1 1"><title>icon tooltip</title><a href="/svg-link"><text>svg text</text></a></svg>' +
        '<title>Real title</title><math><title>m</title><mi>x</mi></math><title>Second title</title><p>body</p></body></html>',
    ),
    page('title-in-body-only', '<body><p>lead</p><title> Late \n\t title </title><p>tail</p></body>'),
    page('title-long', `<title>${'long title words '.repeat(100)}</title><p>short body</p>`),
    page('title-markup', '<title>A <b>bold</b> &amp; <i>title</title><p>after</p>'),
    page(
      'noscript-template',
      '<title>NS</title><noscript><a href="/ns">ns</a><img src="/px.gif"><p>no script text</p></noscript>' +
        '<template><a href="/tpl">t</a><div>template text</div></template><p>visible</p><style>p > a { color: red } </p></style><iframe src="/frame"></iframe>' +
        '<frameset><frame src=" /f1 "></frameset><map><area href="/area" rel="Help"></map><img src="/img1.png"><img src="">',
    ),
    page(
      'robots-base-canonical',
      '<html lang="  de-CH "><html lang="en"><head><base target="_blank"><base href=" /b/ "><base href="/second/">' +
        '<link rel="Canonical Alternate" href=" /c "><link rel="canonical" href="/c2"><link rel=canonical href="">' +
        '<meta name=" ROBOTS " content="NONE"><meta name="robots" content="noarchive"><meta name="googlebot" content="noindex"></head>' +
        '<body><a href="/r" rel=" NoFollow\tUGC\n sponsored ">r</a><a href="   ">blank</a><a href="">empty</a><a>none</a>' +
        `<a href="/${'x'.repeat(9000)}">overlong</a><a href="/x" href="/dup">dup</a><A HREF="/UPPER" REL="NEXT">up</A></body></html>`,
    ),
    page('meta-robots-split', '<meta name="robots" content="noindex"><meta name="ROBOTS" content=" NoFollow , max-snippet:-1"><p>x</p>'),
    page('empty-html-lang', '<html lang=""><title></title><body>   </body></html>'),
    page(
      'comments-cdata',
      '<!-- <a href=/commented> --><![CDATA[ cdata text ]]><?xml version="1.0"?><p>after comment</p>' +
        '<textarea><a href=/in-textarea>area</textarea><xmp><a href=/in-xmp></xmp><plaintext><a href=/in-plaintext>',
    ),
    page(
      'whitespace',
      '<title>\u00a0Spaced\u2028title\u3000</title><p>tab\there\r\nnew\fline\u00a0nbsp\u200bzero\u2003em</p><pre>  pre\n  kept </pre>' +
        '<b>a</b><i>b</i><br>c<p>d</p>e<span>f</span><div>g</div><td>h<th>i<li>j',
    ),
    page(
      'case-mappings',
      '<title>İstanbul ΣΟΦΟΣ</title><p>İSTANBUL İzmir ΟΔΥΣΣΕΥΣ ΣΟΦΟΣ Straße STRASSE ǅemal Ⅻ ﬁnance Ａｂｃ 𐐀𐐁 Σ ς σ</p>' +
        '<p>e\u0301te\u0301 café CAFÉ cafe\u0301 ﬀ ΐ</p>',
    ),
    page(
      'cjk-utf8',
      `<html lang="ja"><title>${japanese.slice(0, 8)}</title><p>${japanese}</p><p>中文网页内容，没有空格。한국어 문장입니다. ภาษาไทยไม่มีช่องว่าง 𠀀𠀁𠀂 😀😃 mixed English words</p>`,
    ),
    page(
      'cyrillic-meta-1251',
      iconv.encode(`<html><head><meta charset="windows-1251"><title>Толстой</title></head><body><p>${cyrillic}</p></body></html>`, 'windows-1251'),
      NO_CHARSET,
    ),
    page('cyrillic-1251-served-as-latin1', iconv.encode(`<title>Толстой</title><p>${cyrillic} ${cyrillic}</p>`, 'windows-1251'), {
      'content-type': 'text/html; charset=iso-8859-1',
    }),
    page('shift-jis-http', iconv.encode(`<title>猫</title><p>${japanese}</p>`, 'shift_jis'), { 'content-type': 'text/html; charset=Shift_JIS' }),
    page(
      'gbk-undeclared',
      iconv.encode('<title>网页</title><p>这是一个没有声明字符集的中文网页，统计检测应该找到它。这是一个没有声明字符集的中文网页。</p>', 'gbk'),
      NO_CHARSET,
    ),
    page('utf8-declared-latin1-bytes', Buffer.from('<title>Café</title><p>Crème brûlée à la française, naïve façade.</p>', 'latin1'), UTF8),
    page('utf8-cut-mid-character', truncated, UTF8),
    page('utf8-cut-mid-character-undeclared', truncated, NO_CHARSET),
    page('utf8-cut-mid-character-declared-latin1', truncated, { 'content-type': 'text/html; charset=iso-8859-1' }),
    page(
      'utf16le-bom',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<title>UTF-16</title><p>wide text ünïcödé</p><a href="/w">w</a>', 'utf16le')]),
      NO_CHARSET,
    ),
    page('utf8-bom', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<title>BOM</title><p>bom text</p>')]), {
      'content-type': 'text/html; charset=windows-1252',
    }),
    page(
      'meta-http-equiv',
      iconv.encode('<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-2"><title>Łódź</title><p>Zażółć gęślą jaźń</p>', 'iso-8859-2'),
      NO_CHARSET,
    ),
    page(
      'nested-deep',
      `<title>Deep</title>${'<div><span>'.repeat(1500)}<a href="/deep">deep link</a> deep text${'</span></div>'.repeat(1500)}<p>after</p><a href="/after">a</a>`,
    ),
    page('nested-svg-deep', `<title>T</title>${'<svg>'.repeat(700)}<title>svg</title>${'</svg>'.repeat(700)}<title>late</title><p>x</p>`),
    page(
      'many-links',
      `<title>Many</title>${Array.from({ length: 40 }, (_, i) => `<a href="/l/${i}" rel="${i % 3 ? 'next' : ''}">l${i}</a><img src="/i/${i}.png">`).join(' ')}`,
    ),
    page('one-word', '<p>Word</p>'),
    page('two-words', '<p>two words</p>'),
    page('text-only', 'just text, no tags at all &amp; an entity'),
    page('empty', Buffer.alloc(0)),
    page('binary', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d])),
  ];
}
