/**
 * A benchmark page shaped like a real one (BENCH_WEB=real): the layout, markup density and inline assets of
 * a CMS-built page, at a size drawn from the measured spread of real HTML documents. docs/performance.md
 * ("The benchmark web") cites the figures behind every constant here.
 *
 * The crawl-relevant link graph (which URLs a page links to) is decided by BenchWeb and passed in, so both
 * shapes of the web have the same graph and differ only in the markup around it.
 */
import type { Prng } from '../../test/web/prng';

export interface RealPageInput {
  host: string;
  port: number;
  /** The page's own path (`/` or `/p/N`). */
  path: string;
  title: string;
  /** Pages of the host (nav links stay within them). */
  pagesPerHost: number;
  /** Body links chosen by BenchWeb: same-host paths, cross-host URLs, and non-web hrefs. */
  links: string[];
  /** Another host of the web, for "external" links in the footer. */
  otherHost: string;
  targetBytes: number;
  rng: Prng;
  /** Prose to draw sentences from. */
  paragraphs: Buffer[];
}

/**
 * Log-normal spread of page sizes around the median. σ = 0.85 is fitted to the Web Almanac 2022 element
 * counts per page (p10 192, p50 653, p90 1,832 on mobile: ln(1832/653)/1.28 = 0.80, ln(653/192)/1.28 = 0.96).
 */
const PAGE_SIZE_SIGMA = 0.85;
/** Clamp of a page's size, in medians: the tails a benchmark of bounded time and memory can hold. */
const SIZE_CLAMP = [0.2, 8] as const;

/** A page size in bytes: log-normal with the given median. */
export function realPageBytes(rng: Prng, medianBytes: number): number {
  // Box–Muller: one standard normal from two uniforms.
  const z = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  const factor = Math.min(SIZE_CLAMP[1], Math.max(SIZE_CLAMP[0], Math.exp(PAGE_SIZE_SIGMA * z)));
  return Math.round(medianBytes * factor);
}

/**
 * Shares of the bytes that are inline `<style>` and inline `<script>` (JSON-LD included). Real pages vary widely;
 * these are chosen so that visible text is about a fifth of the bytes (see docs/performance.md).
 */
const STYLE_SHARE = 0.15;
const SCRIPT_SHARE = 0.2;
/** About what one article block and one sidebar link weigh, to plan how the links spread over the page. */
const BLOCK_BYTES = 700;
const ASIDE_BYTES_PER_LINK = 150;

export function renderRealPage(input: RealPageInput): Buffer {
  const { rng, host, port, targetBytes } = input;
  const origin = `http://${host}:${port}`;
  const spell = (href: string) => spellLink(rng, origin, input.path, href);
  const navCount = Math.min(input.pagesPerHost - 1, 12 + Math.round(targetBytes / 4096));
  const out: string[] = [];
  let size = 0;
  // Only ASCII is written, so string length is byte length.
  const push = (s: string) => {
    out.push(s);
    size += s.length;
  };

  push(head(input, origin, rng, targetBytes));
  push(
    `<body class="page-template-default page wp-custom-logo" data-page="${input.path}">\n` +
      `<a class="skip-link screen-reader-text" href="#main">Skip to content</a>\n` +
      `<!-- header -->\n<div id="page" class="site">\n<header id="masthead" class="site-header" role="banner">\n` +
      `<div class="container"><div class="row align-items-center">\n<div class="col-6 col-md-3 site-branding">` +
      `<a href="${spell('/')}" class="custom-logo-link" rel="home" aria-current="page"><img width="180" height="48" src="/static/logo.svg" class="custom-logo" alt="${host}" decoding="async"></a></div>\n`,
  );
  push(navMenu(rng, navCount, spell));
  push(
    `<div class="col-md-3 header-search"><form role="search" method="get" class="search-form" action="/search">` +
      `<label><span class="screen-reader-text">Search for:</span><input type="search" class="search-field" placeholder="Search &hellip;" value="" name="s"></label>` +
      `<button type="submit" class="search-submit" aria-label="Search"><svg class="icon icon-search" aria-hidden="true" focusable="false"><use href="#icon-search"></use></svg></button></form></div>\n` +
      `</div></div>\n</header>\n`,
  );
  push(
    `<nav class="breadcrumbs" aria-label="Breadcrumb"><ol itemscope itemtype="https://schema.org/BreadcrumbList">` +
      `<li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem"><a itemprop="item" href="${spell('/')}"><span itemprop="name">Home</span></a><meta itemprop="position" content="1"></li>` +
      `<li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem"><a itemprop="item" href="${spell(`/p/${rng.int(1, input.pagesPerHost - 1)}`)}"><span itemprop="name">${word(rng)}</span></a><meta itemprop="position" content="2"></li>` +
      `<li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem"><span itemprop="name">${escapeText(input.title)}</span><meta itemprop="position" content="3"></li></ol></nav>\n`,
  );
  push(
    `<div id="content" class="site-content"><div class="container"><div class="row">\n` +
      `<main id="main" class="site-main col-lg-8" role="main">\n<article id="post-${rng.int(100, 99999)}" class="post type-post status-publish format-standard has-post-thumbnail hentry">\n` +
      `<header class="entry-header"><h1 class="entry-title">${escapeText(input.title)}</h1>` +
      `<div class="entry-meta"><span class="posted-on">Posted on <time class="entry-date published" datetime="2024-0${rng.int(1, 9)}-1${rng.int(0, 9)}T0${rng.int(0, 9)}:00:00+00:00">${rng.int(1, 28)}&nbsp;March&nbsp;2024</time></span>` +
      `<span class="byline"> by <span class="author vcard"><a class="url fn n" href="${spell(`/p/${rng.int(1, input.pagesPerHost - 1)}`)}">${word(rng)}</a></span></span></div></header>\n` +
      `<div class="entry-content">\n`,
  );

  // The footer and the sidebar's share of links are sized first, so that the article can fill the page up to
  // its target; the body links the article had no room for go to the sidebar's compact list.
  const tail = footer(input, rng, spell, navCount);
  const links = input.links;
  const articleShare = Math.floor(links.length * 0.7);
  const reserve = tail.length + (links.length - articleShare) * ASIDE_BYTES_PER_LINK + 700;
  let next = 0;
  let block = 0;
  while (size + reserve < targetBytes) {
    const blocksLeft = Math.max(1, Math.round((targetBytes - size - reserve) / BLOCK_BYTES));
    const take = Math.min(articleShare - next, Math.ceil((articleShare - next) / blocksLeft));
    push(contentBlock(rng, input.paragraphs, links.slice(next, next + take), spell, block++));
    next += take;
  }
  push('</div>\n</article>\n</main>\n');
  push(sidebar(rng, links.slice(next), spell));
  push('</div></div></div>\n');
  push(tail);
  return Buffer.from(out.join(''), 'latin1');
}

function head(input: RealPageInput, origin: string, rng: Prng, targetBytes: number): string {
  const url = `${origin}${input.path}`;
  const description = escapeAttr(sentence(rng, input.paragraphs, 24));
  const jsonLd = JSON.stringify({
    '@context': 'https://schema.org',
    '@graph': [
      { '@type': 'WebSite', '@id': `${origin}/#website`, url: `${origin}/`, name: input.host, inLanguage: 'en-US' },
      { '@type': 'WebPage', '@id': `${url}#webpage`, url, name: input.title, isPartOf: { '@id': `${origin}/#website` }, description },
      { '@type': 'Article', headline: input.title, author: { '@type': 'Person', name: word(rng) }, datePublished: '2024-03-14T09:00:00+00:00' },
    ],
  });
  return (
    `<!DOCTYPE html>\n<html lang="en-US" class="no-js">\n<head>\n<meta charset="UTF-8">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeText(input.title)} &#8211; ${input.host}</title>\n` +
    `<meta name="description" content="${description}">\n<meta name="robots" content="index, follow, max-image-preview:large">\n` +
    `<link rel="canonical" href="${url}">\n` +
    `<meta property="og:locale" content="en_US"><meta property="og:type" content="article"><meta property="og:title" content="${escapeAttr(input.title)}">` +
    `<meta property="og:description" content="${description}"><meta property="og:url" content="${url}"><meta property="og:site_name" content="${input.host}">` +
    `<meta property="og:image" content="${origin}/static/og-${rng.int(1, 99)}.jpg"><meta name="twitter:card" content="summary_large_image">\n` +
    `<link rel="icon" href="/static/favicon-32.png" sizes="32x32"><link rel="apple-touch-icon" href="/static/apple-touch-icon.png">\n` +
    `<link rel="stylesheet" id="theme-css" href="/static/theme.css?ver=6.4.2" media="all">\n` +
    `<link rel="stylesheet" id="blocks-css" href="/static/blocks.min.css?ver=6.4.2" media="all">\n` +
    `<!--[if lt IE 9]><script src="/static/html5shiv.js"></script><![endif]-->\n` +
    `<style id="theme-inline-css">\n${inlineCss(rng, Math.round(targetBytes * STYLE_SHARE))}</style>\n` +
    `<script type="application/ld+json" class="yoast-schema-graph">${jsonLd}</script>\n` +
    `<script>\n${inlineScript(rng, Math.round(targetBytes * SCRIPT_SHARE) - jsonLd.length)}</script>\n` +
    `<script src="/static/jquery.min.js?ver=3.7.1" id="jquery-core-js"></script>\n</head>\n`
  );
}

function navMenu(rng: Prng, count: number, spell: (href: string) => string): string {
  const items: string[] = [];
  let p = 1;
  while (p <= count) {
    const children = rng.chance(0.4) ? rng.int(2, 5) : 0;
    const id = rng.int(10, 9999);
    let item = `<li id="menu-item-${id}" class="menu-item menu-item-type-post_type menu-item-object-page${children ? ' menu-item-has-children' : ''} menu-item-${id}"><a href="${spell(`/p/${p++}`)}">${word(rng)}</a>`;
    if (children) {
      item += '<ul class="sub-menu">';
      for (let c = 0; c < children && p <= count; c++)
        item += `<li class="menu-item menu-item-type-post_type"><a href="${spell(`/p/${p++}`)}">${word(rng)} ${word(rng)}</a></li>`;
      item += '</ul>';
    }
    items.push(`${item}</li>`);
  }
  return (
    `<div class="col-md-6"><nav id="site-navigation" class="main-navigation" aria-label="Primary menu">` +
    `<button class="menu-toggle" aria-controls="primary-menu" aria-expanded="false">Menu</button>` +
    `<div class="menu-main-container"><ul id="primary-menu" class="menu nav-menu">${items.join('\n')}</ul></div></nav></div>\n`
  );
}

const CLASS_WORDS =
  'wp-block has-text-align-left is-layout-flow card card-body col-md-6 mb-4 mt-2 d-flex text-muted lead small fw-bold elementor-widget-container elementor-element'.split(
    ' ',
  );

/** A section of the article: wrappers with attributes, a heading, paragraphs with inline markup, sometimes a figure, list or comment. */
function contentBlock(rng: Prng, paragraphs: Buffer[], links: string[], spell: (href: string) => string, index: number): string {
  const parts: string[] = [];
  const cls = () => `${rng.pick(CLASS_WORDS)} ${rng.pick(CLASS_WORDS)}`;
  // Page builders nest a widget in a varying number of wrappers: the DOM depth varies with it.
  const wrappers = rng.int(2, 6);
  parts.push(`<div class="${cls()}" data-id="${(rng.next() * 0xffffffff).toString(16).slice(0, 7)}" data-element_type="widget">`);
  for (let i = 1; i < wrappers; i++) parts.push(`<div class="${cls()}">`);
  if (index % 3 === 0) parts.push(`<h2 class="wp-block-heading" id="section-${index}">${word(rng)} ${word(rng)} &amp; ${word(rng)}</h2>\n`);
  if (rng.chance(0.15)) parts.push(`<!-- wp:paragraph {"className":"${rng.pick(CLASS_WORDS)}"} -->\n`);
  const paragraphCount = rng.int(1, 2);
  let linkAt = 0;
  for (let i = 0; i < paragraphCount; i++) {
    let text = sentence(rng, paragraphs, rng.int(30, 70));
    text = decorate(rng, text);
    while (linkAt < links.length && (i === paragraphCount - 1 || rng.chance(0.5))) {
      const href = links[linkAt++];
      const rel = href.startsWith('http') ? ' rel="noopener" target="_blank"' : '';
      text += ` <a href="${spell(href)}"${rel} class="${rng.chance(0.5) ? 'internal-link' : 'more-link'}">${word(rng)} ${word(rng)}</a>.`;
    }
    parts.push(`<p>${text}</p>\n`);
  }
  const r = rng.next();
  if (r < 0.12) {
    const n = rng.int(1, 999);
    parts.push(
      `<figure class="wp-block-image size-large"><img loading="lazy" decoding="async" width="1024" height="683" src="/static/uploads/img-${n}-1024x683.jpg" ` +
        `srcset="/static/uploads/img-${n}-1024x683.jpg 1024w, /static/uploads/img-${n}-300x200.jpg 300w, /static/uploads/img-${n}-768x512.jpg 768w, /static/uploads/img-${n}.jpg 1536w" ` +
        `sizes="(max-width: 1024px) 100vw, 1024px" alt="${escapeAttr(sentence(rng, paragraphs, 6))}" class="wp-image-${n}"><figcaption class="wp-element-caption">${sentence(rng, paragraphs, 10)}</figcaption></figure>\n`,
    );
  } else if (r < 0.22) {
    const items: string[] = [];
    for (let i = rng.int(3, 6); i > 0; i--) items.push(`<li><span class="${rng.pick(CLASS_WORDS)}">${sentence(rng, paragraphs, rng.int(4, 12))}</span></li>`);
    parts.push(`<ul class="wp-block-list">${items.join('')}</ul>\n`);
  } else if (r < 0.27) {
    parts.push(`<!-- .${rng.pick(CLASS_WORDS)} ${rng.int(1, 999)} -->\n`);
  }
  parts.push(`${'</div>'.repeat(wrappers)}\n`);
  return parts.join('');
}

/** Inline markup and entities inside running text. */
function decorate(rng: Prng, text: string): string {
  const words = text.split(' ');
  for (let i = 3; i < words.length - 2; i += rng.int(4, 12)) {
    const r = rng.next();
    if (r < 0.25) words[i] = `<strong>${words[i]}</strong>`;
    else if (r < 0.45) words[i] = `<em>${words[i]}</em>`;
    else if (r < 0.6) words[i] = `<span class="${rng.pick(CLASS_WORDS)}">${words[i]}</span>`;
    else if (r < 0.75) words[i] = `${words[i]}&nbsp;&amp;`;
    else if (r < 0.85) words[i] = `${words[i]}&#8217;s`;
    else words[i] = `${words[i]} &mdash;`;
  }
  return words.join(' ');
}

function sidebar(rng: Prng, links: string[], spell: (href: string) => string): string {
  const items = links.map(
    (href) => `<li class="recent-post"><a href="${spell(href)}">${word(rng)} ${word(rng)} ${word(rng)}</a><span class="post-date">${rng.int(1, 28)}&nbsp;Feb</span></li>`,
  );
  return (
    `<aside id="secondary" class="widget-area col-lg-4" role="complementary" aria-label="Sidebar">\n` +
    `<section id="recent-posts" class="widget widget_recent_entries"><h2 class="widget-title">Recent posts</h2><ul>${items.join('\n')}</ul></section>\n` +
    `<section id="newsletter" class="widget widget_newsletter"><h2 class="widget-title">Newsletter</h2>` +
    `<form class="newsletter-form" method="post" action="/subscribe" data-form-id="${rng.int(1, 99)}"><input type="hidden" name="_wpnonce" value="${rng.int(1e8, 1e9 - 1).toString(16)}">` +
    `<label for="nl-email">Email</label><input id="nl-email" type="email" name="email" required placeholder="you@example.test" aria-required="true">` +
    `<select name="topic"><option value="">All topics</option><option value="1">${word(rng)}</option><option value="2">${word(rng)}</option></select>` +
    `<button type="submit" class="btn btn-primary">Subscribe</button></form></section>\n</aside>\n`
  );
}

function footer(input: RealPageInput, rng: Prng, spell: (href: string) => string, navCount: number): string {
  const column = (n: number) => {
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push(`<li><a href="${spell(`/p/${rng.int(1, navCount)}`)}">${word(rng)}</a></li>`);
    return `<div class="col-6 col-md-3"><h3 class="footer-title">${word(rng)}</h3><ul class="footer-links">${items.join('')}</ul></div>`;
  };
  const external = `http://${input.otherHost}:${input.port}/`;
  return (
    `<footer id="colophon" class="site-footer" role="contentinfo">\n<div class="container"><div class="row">${column(4)}${column(4)}\n` +
    `<div class="col-12 col-md-6 footer-contact"><p>Call <a href="tel:+15550100${rng.int(10, 99)}">+1&nbsp;555&nbsp;0100</a> or write to ` +
    `<a href="mailto:hello@${input.host}">hello@${input.host}</a>.</p>` +
    `<ul class="social-links"><li><a href="${external}" rel="noopener" target="_blank" aria-label="Partner">${word(rng)}</a></li>` +
    `<li><a href="javascript:void(0)" onclick="share('${input.path}')" aria-label="Share">Share</a></li><li><a href="#page">Back to top &uarr;</a></li></ul></div>\n` +
    `</div><div class="site-info">&copy; 2024 ${input.host}. All rights reserved.</div></div>\n</footer>\n</div><!-- #page -->\n` +
    `<noscript><img height="1" width="1" style="display:none" alt="" src="/static/px.gif?id=${rng.int(1e5, 1e6)}&amp;ev=PageView&amp;noscript=1"></noscript>\n` +
    `<script id="theme-config-js">var themeConfig = {"ajaxUrl":"\\/wp-admin\\/admin-ajax.php","nonce":"${rng.int(1e8, 1e9 - 1).toString(16)}","page":"${input.path}"};</script>\n` +
    `<script src="/static/theme.min.js?ver=1.${rng.int(0, 9)}" id="theme-js" defer></script>\n</body>\n</html>\n`
  );
}

const CSS_PROPS = ['margin', 'padding', 'color', 'background-color', 'font-size', 'line-height', 'display', 'border-radius', 'max-width', 'gap'];
const CSS_VALUES = ['0', '1rem', '.5em', '#1e1e1e', 'var(--wp--preset--color--primary)', 'flex', 'grid', '4px', '100%', 'clamp(1rem,2vw,1.5rem)'];

/** Minified-looking CSS of about `bytes` bytes. */
function inlineCss(rng: Prng, bytes: number): string {
  const rules: string[] = [':root{--wp--preset--color--primary:#0a58ca;--wp--preset--spacing--40:1.5rem}'];
  let n = rules[0].length;
  while (n < bytes) {
    const decls: string[] = [];
    for (let i = rng.int(1, 5); i > 0; i--) decls.push(`${rng.pick(CSS_PROPS)}:${rng.pick(CSS_VALUES)}`);
    const rule = `.${rng.pick(CLASS_WORDS)}${rng.chance(0.3) ? ` .${rng.pick(CLASS_WORDS)}` : ''}${rng.chance(0.2) ? ':hover' : ''}{${decls.join(';')}}`;
    rules.push(rule);
    n += rule.length;
  }
  return `${rules.join('')}\n`;
}

/** Analytics- and theme-like JavaScript of about `bytes` bytes (with `<`, quotes and `</` escaped as real code has). */
function inlineScript(rng: Prng, bytes: number): string {
  const lines = [
    'window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag("js",new Date());',
    `gtag("config","G-${rng.int(1e6, 9e6)}",{"anonymize_ip":true});`,
    '(function(w,d){var s=d.createElement("script");s.async=!0;s.src="/static/loader.js";d.head.appendChild(s)})(window,document);',
  ];
  let n = lines.join('').length;
  while (n < bytes) {
    const id = rng.int(1, 9999);
    const line =
      rng.next() < 0.5
        ? `var cfg_${id}={"i18n":{"close":"Close","next":"Next &raquo;"},"breakpoints":{"md":768,"lg":1024},"selector":".${rng.pick(CLASS_WORDS)}"};`
        : `if(document.querySelectorAll(".${rng.pick(CLASS_WORDS)}").length<${id}){document.documentElement.className=document.documentElement.className.replace("no-js","js")}`;
    lines.push(line);
    n += line.length;
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Same-host paths spelled as real pages spell them: mostly root-relative, some absolute, some relative to the
 * page, a few protocol-relative. Every spelling resolves to the same URL, so the link graph is unchanged.
 */
function spellLink(rng: Prng, origin: string, pagePath: string, href: string): string {
  if (!href.startsWith('/')) return href;
  const r = rng.next();
  if (r < 0.6) return href;
  if (r < 0.85) return `${origin}${href}`;
  if (r < 0.95 && pagePath.startsWith('/p/') && href.startsWith('/p/')) return href.slice(3); // relative to /p/
  return `${origin.slice('http:'.length)}${href}`;
}

const wordsOf = new WeakMap<Buffer, string[]>();
function sentence(rng: Prng, paragraphs: Buffer[], words: number): string {
  const paragraph = paragraphs[rng.int(0, paragraphs.length - 1)];
  let all = wordsOf.get(paragraph);
  if (!all) wordsOf.set(paragraph, (all = paragraph.toString().split(' ')));
  const start = rng.int(0, Math.max(0, all.length - words));
  return all.slice(start, start + words).join(' ');
}

const WORDS = 'news guide about services contact blog careers events shop support pricing team press stories resources products'.split(' ');
function word(rng: Prng): string {
  const w = rng.pick(WORDS);
  return w[0].toUpperCase() + w.slice(1);
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}
