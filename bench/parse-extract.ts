/**
 * The parse + extract path on one core, on this machine: a realistic ~30 KB HTML page with ~60 links (a news
 * article: head with stylesheets, scripts and metadata, navigation, body text with inline links, a sidebar,
 * a footer; relative, root-relative and absolute links, tracking parameters, fragments, mailto/javascript
 * links, a nofollow) goes through
 *   1. ContentParserService.parse (libs/content-parser): bytes → charset → text, title, robots, links, hashes;
 *   2. UrlExtractorService.extract (libs/url-extractor): raw hrefs → absolute URLs;
 *   3. canonicalize (libs/url) on each URL, as the URL filter does.
 * Printed: pages/s for the whole path, by wall time and by CPU time (the process is single-threaded: CPU
 * time is what one core spends, whatever else the machine runs), and the split: decode (charset sniffing
 * and decoding), parse (htmlparser2 pass collecting title, links and text), the content hash, the rest of
 * parse() (by difference: robots header, simhash), extract, canonicalize — each timed alone on the same page.
 * The last line of output is `BENCH_RESULT {json}`: the whole path's pages/s on one core, by CPU time.
 *
 * Usage: npm run -s bench:parse-extract  (BENCH_PARSE_SECONDS, default 3, per measurement; BENCH_QUICK=1
 * makes the default 1)
 */
import os from 'node:os';
import { loadConfig } from '@crawler/config';
import type { FetchedPage, PageLinks } from '@crawler/contracts';
import { ContentParserService } from '@crawler/content-parser';
import { contentHash, decodeHtml, parseHtmlPage } from '@crawler/html';
import { canonicalize } from '@crawler/url';
import { UrlExtractorService } from '@crawler/url-extractor';
import { capitalise, escapeHtml, words } from '../test/web/html';
import { Prng } from '../test/web/prng';
import { printBenchResult } from './report/bench-result';

const SECONDS = Number(process.env.BENCH_PARSE_SECONDS || (process.env.BENCH_QUICK === '1' ? 1 : 3));
const PAGE_URL = 'https://news.example.com/world/2024/05/the-long-article-1234.html';
const TARGET_BYTES = 30 * 1024;

/** The page: deterministic, ~30 KB, ~60 links of every kind a crawler meets. */
function articlePage(): { html: string; hrefs: number } {
  const rng = new Prng(20240501);
  const hrefs: string[] = [];
  const a = (href: string, text: string, rel?: string) => {
    hrefs.push(href);
    return `<a href="${escapeHtml(href)}"${rel ? ` rel="${rel}"` : ''} class="link link--${rng.int(1, 4)}">${escapeHtml(text)}</a>`;
  };
  const sections = ['world', 'politics', 'business', 'technology', 'science', 'health', 'sport', 'culture', 'opinion', 'travel'];
  const head = [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(capitalise(words(rng, 6, 10)))} | News Example</title>`,
    `<meta name="description" content="${escapeHtml(words(rng, 20, 30))}">`,
    '<meta name="robots" content="index, follow, max-image-preview:large">',
    `<meta property="og:title" content="${escapeHtml(words(rng, 6, 10))}">`,
    '<meta property="og:image" content="https://static.news.example.com/img/2024/05/lead.jpg">',
    `<link rel="canonical" href="${PAGE_URL}">`,
    '<link rel="alternate" hreflang="fr" href="https://news.example.com/fr/monde/2024/05/article-1234.html">',
    '<link rel="stylesheet" href="/static/css/main.4f3a2b.css">',
    '<link rel="preload" href="/static/fonts/serif.woff2" as="font" crossorigin>',
    '<link rel="icon" href="/favicon.ico">',
    `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'NewsArticle', headline: words(rng, 6, 10), datePublished: '2024-05-14T08:00:00Z', author: { '@type': 'Person', name: 'A. Writer' } })}</script>`,
    `<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());${'var cfg={a:1,b:"x"};'.repeat(60)}</script>`,
    `<style>body{font-family:Georgia,serif;margin:0}.link{color:#036}.nav li{display:inline-block;margin:0 .5em}${'.c{padding:1px}'.repeat(80)}</style>`,
  ];
  const nav = [
    '<header class="site-header"><nav class="nav"><ul>',
    ...sections.map((s) => `<li>${a(`/${s}/`, capitalise(s))}</li>`),
    `<li>${a('#main', 'Skip to content')}</li>`,
    '</ul></nav></header>',
  ];
  const body: string[] = [
    `<main id="main"><article><h1>${escapeHtml(capitalise(words(rng, 6, 10)))}</h1>`,
    `<p class="byline">By ${a('/authors/a-writer', 'A. Writer')} · 14 May 2024</p>`,
  ];
  const inline = () => {
    const r = rng.next();
    const n = rng.int(1000, 99_999);
    if (r < 0.35) return a(`/${rng.pick(sections)}/2024/05/${words(rng, 2, 4).replace(/ /g, '-')}-${n}.html`, words(rng, 2, 5));
    if (r < 0.55) return a(`../../${rng.pick(sections)}/related-${n}.html?ref=inline`, words(rng, 2, 5));
    if (r < 0.8) return a(`https://www.other-${rng.int(1, 40)}.example/report/${n}?utm_source=news&utm_medium=link&id=${n}`, words(rng, 2, 5));
    if (r < 0.9) return a(`https://en.wikipedia.example/wiki/${capitalise(rng.pick(['Crawler', 'Frontier', 'Bloom_filter', 'Hash']))}#History`, words(rng, 1, 3));
    return a(`https://sponsor-${rng.int(1, 5)}.example/offer?id=${n}`, 'sponsored', 'nofollow sponsored');
  };
  const paragraphs: string[] = [];
  const sidebar = ['<aside class="related"><h2>Related</h2><ul>'];
  for (let i = 0; i < 15; i++) sidebar.push(`<li>${a(`/${rng.pick(sections)}/2024/05/story-${rng.int(1000, 9999)}.html`, capitalise(words(rng, 4, 8)))}</li>`);
  sidebar.push('</ul></aside>');
  const footer = [
    '<footer><ul>',
    ...['about', 'contact', 'careers', 'privacy', 'terms', 'cookies', 'newsletters'].map((p) => `<li>${a(`/${p}`, capitalise(p))}</li>`),
    `<li>${a('mailto:desk@news.example.com', 'Email the desk')}</li>`,
    `<li>${a('javascript:void(0)', 'Cookie settings')}</li>`,
    `<li>${a('https://twitter.example/newsexample', 'Follow us')}</li>`,
    '</ul><p>© 2024 News Example</p></footer>',
  ];
  const render = () =>
    `<!doctype html>\n<html lang="en">\n<head>\n${head.join('\n')}\n</head>\n<body class="article">\n${nav.join('\n')}\n${body.join('\n')}\n` +
    `${paragraphs.join('\n')}\n</article>\n${sidebar.join('\n')}\n</main>\n${footer.join('\n')}\n` +
    `<script src="/static/js/app.9c1d.js" defer></script>\n</body>\n</html>\n`;
  // Paragraphs until the page reaches its size, one inline link in every other paragraph.
  while (Buffer.byteLength(render()) < TARGET_BYTES) {
    const text = `${escapeHtml(capitalise(words(rng, 40, 80)))}.`;
    paragraphs.push(`<p>${paragraphs.length % 2 === 0 ? `${text} ${inline()} ${escapeHtml(words(rng, 5, 15))}.` : text}</p>`);
  }
  return { html: render(), hrefs: hrefs.length };
}

interface Timing {
  /** Operations per wall second and per CPU second. */
  wallRate: number;
  cpuRate: number;
  /** CPU µs per operation. */
  cpuUs: number;
}

/** Runs `fn` for SECONDS (after a warm-up), counting calls. */
function measure(fn: () => unknown): Timing {
  for (let i = 0; i < 300; i++) fn();
  let calls = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  while (performance.now() < deadline) {
    for (let i = 0; i < 20; i++) fn();
    calls += 20;
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { wallRate: calls / wall, cpuRate: calls / cpuSeconds, cpuUs: (cpuSeconds * 1e6) / calls };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function main() {
  const config = loadConfig({});
  const parser = new ContentParserService(config);
  const extractor = new UrlExtractorService();
  const { html, hrefs } = articlePage();
  const body = Buffer.from(html, 'utf8');
  const contentType = 'text/html; charset=utf-8';
  const fetched: FetchedPage = {
    v: 1,
    fetchId: 'bench',
    url: PAGE_URL,
    depth: 1,
    status: 200,
    headers: { 'content-type': contentType },
    contentType: 'text/html',
    bodyKey: 'staging/bench',
    length: body.length,
    truncated: false,
    fetchedAt: new Date(0).toISOString(),
  };

  const parse = () => {
    const result = parser.parse(fetched, body);
    if (!result.ok) throw new Error(`parse failed: ${result.reason}`);
    return result.page;
  };
  const page = parse();
  const links: PageLinks = { v: 1, url: page.url, depth: page.depth, baseHref: page.baseHref, nofollow: page.nofollow, links: page.links };
  const extract = () => extractor.extract(links);
  const extracted = extract();
  const canonicalizeAll = () => {
    let ok = 0;
    for (const u of extracted) if (canonicalize(u.url).ok) ok++;
    return ok;
  };
  const canonical = canonicalizeAll();
  const decoded = decodeHtml(body, contentType);
  const visibleText = parseHtmlPage(decoded.text).text;
  const whole = () => {
    const p = parse();
    const urls = extractor.extract({ v: 1, url: p.url, depth: p.depth, baseHref: p.baseHref, nofollow: p.nofollow, links: p.links });
    let n = 0;
    for (const u of urls) if (canonicalize(u.url).ok) n++;
    return n;
  };

  const loadAtStart = os.loadavg();
  measure(whole); // warm-up: every step compiled and optimised before anything is timed
  const parts = {
    decode: measure(() => decodeHtml(body, contentType)),
    htmlParse: measure(() => parseHtmlPage(decoded.text, { maxLinks: config.parser.maxLinks })),
    contentHash: measure(() => contentHash(visibleText)),
    parse: measure(parse),
    extract: measure(extract),
    canonicalize: measure(canonicalizeAll),
  };
  const path = measure(whole);
  const rest = parts.parse.cpuUs - parts.decode.cpuUs - parts.htmlParse.cpuUs - parts.contentHash.cpuUs;
  const sum = parts.parse.cpuUs + parts.extract.cpuUs + parts.canonicalize.cpuUs;

  console.log('\n## Parse + extract, one core\n');
  console.log(
    `Machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}, load average ${loadAtStart.map((l) => l.toFixed(1)).join(' ')} at start, ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at end; ${SECONDS} s per measurement`,
  );
  console.log(
    `Page: ${fmt(body.length)} bytes of UTF-8 HTML (${fmt(decoded.text.length)} characters), ${hrefs} hrefs written, ${page.links.length} links found by the parser ` +
      `(a, area, link, iframe), ${extracted.length} URLs extracted (distinct, http(s), nofollow and non-page <link>s dropped), ${canonical} canonical; title "${page.title?.slice(0, 40)}…"\n`,
  );
  console.log('| step | CPU µs per page | share | pages/s on one core (CPU time) | pages/s (wall time) |');
  console.log('|---|---|---|---|---|');
  const line = (name: string, t: Timing | undefined, us: number) =>
    console.log(`| ${name} | ${fmt(us, 1)} | ${fmt((us / sum) * 100, 1)} % | ${t ? fmt(t.cpuRate) : fmt(1e6 / us)} | ${t ? fmt(t.wallRate) : '—'} |`);
  line('decode: charset sniffing (BOM, HTTP, meta prescan) + decoding', parts.decode, parts.decode.cpuUs);
  line('parse: htmlparser2 pass (title, robots meta, links, text)', parts.htmlParse, parts.htmlParse.cpuUs);
  line(`content hash: NFC + whitespace collapse + SHA-256 of the ${fmt(visibleText.length)}-character text`, parts.contentHash, parts.contentHash.cpuUs);
  line('the rest of ContentParserService.parse (binary check, X-Robots-Tag, the simhash if the parser computes one)', undefined, rest);
  line('**ContentParserService.parse** (the four above)', parts.parse, parts.parse.cpuUs);
  line(`UrlExtractorService.extract (${page.links.length} links → ${extracted.length} absolute URLs)`, parts.extract, parts.extract.cpuUs);
  line(`canonicalize × ${extracted.length}`, parts.canonicalize, parts.canonicalize.cpuUs);
  line('sum of the steps timed alone', undefined, sum);
  console.log(`| **parse + extract + canonicalize, end to end** | **${fmt(path.cpuUs, 1)}** | | **${fmt(path.cpuRate)}** | ${fmt(path.wallRate)} |`);
  console.log(`\nThroughput in page bytes: ${fmt((path.cpuRate * body.length) / 2 ** 20, 1)} MiB/s per core.`);
  printBenchResult('parse-extract', [
    { id: 'pages-per-core', label: `Parse + extract + canonicalize, ${fmt(body.length / 1024)} KB page, one core (CPU time)`, value: path.cpuRate, unit: 'pages/s' },
  ]);
}

main();
