import { parseHtmlPage } from '@crawler/html';
import { resolveLink } from '@crawler/url';
import { BenchWeb, type BenchWebShape } from '../../bench/web/bench-web';

const HOSTS = 6;
const PAGES_PER_HOST = 120;
const PORT = 8080;

function build(shape: BenchWebShape, options: { seed?: number; pageKb?: number } = {}): BenchWeb {
  return new BenchWeb({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, port: PORT, shape, ...options });
}

function pages(web: BenchWeb): { url: string; html: string }[] {
  return web.hosts.flatMap((host) =>
    Array.from({ length: PAGES_PER_HOST }, (_, p) => {
      const path = p === 0 ? '/' : `/p/${p}`;
      return { url: `http://${host.name}:${PORT}${path}`, html: web.reply(host.name, path)!.body.toString() };
    }),
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Where an anchor's href goes, as a crawler sees it. */
function linkKind(href: string, pageUrl: string): string {
  const url = resolveLink(href, pageUrl);
  if (url === null) return 'not-crawlable';
  const target = new URL(url);
  const page = new URL(pageUrl);
  if (target.host !== page.host) return 'cross-host';
  if (target.pathname === page.pathname && target.hash) return 'fragment';
  return 'same-host';
}

describe('the benchmark web, real shape', () => {
  const web = build('real');
  const all = pages(web);

  it('spreads page sizes around the BENCH_PAGE_KB median', () => {
    for (const pageKb of [30, 60]) {
      const sizes = pages(build('real', { pageKb })).map((p) => p.html.length);
      expect(Math.abs(median(sizes) / (pageKb * 1024) - 1)).toBeLessThan(0.1);
      // A spread, not one size: the 90th percentile is well above the median.
      const p90 = [...sizes].sort((a, b) => a - b)[Math.floor(sizes.length * 0.9)];
      expect(p90 / median(sizes)).toBeGreaterThan(2);
    }
  });

  it('builds pages that parse, with the markup of real ones', () => {
    let textBytes = 0;
    let bytes = 0;
    for (const { html } of all) {
      const parsed = parseHtmlPage(html);
      expect(parsed.title).toMatch(/page \d+/);
      expect(parsed.canonical).toBeDefined();
      expect(parsed.links.length).toBeGreaterThan(40);
      expect(html.match(/<script[\s>]/g)!.length).toBeGreaterThanOrEqual(4);
      expect(html).toContain('<style');
      expect(html).toContain('application/ld+json');
      expect(html).toContain('<!--');
      expect(html).toMatch(/&nbsp;|&amp;|&#\d+;/);
      // Script and style bodies are not text.
      expect(parsed.text).not.toContain('dataLayer');
      textBytes += parsed.text.length;
      bytes += html.length;
    }
    const textShare = textBytes / bytes;
    expect(textShare).toBeGreaterThan(0.15);
    expect(textShare).toBeLessThan(0.35);
  });

  it('has every kind of link, in realistic proportions', () => {
    const counts: Record<string, number> = {};
    let total = 0;
    for (const { url, html } of all) {
      for (const link of parseHtmlPage(html).links.filter((l) => l.tag === 'a')) {
        const kind = linkKind(link.href, url);
        counts[kind] = (counts[kind] ?? 0) + 1;
        total++;
      }
    }
    const share = (kind: string) => (counts[kind] ?? 0) / total;
    expect(share('same-host')).toBeGreaterThan(0.75);
    expect(share('cross-host')).toBeGreaterThan(0.04);
    expect(share('cross-host')).toBeLessThan(0.15);
    expect(share('not-crawlable')).toBeGreaterThan(0.02);
    expect(share('not-crawlable')).toBeLessThan(0.1);
    expect(share('fragment')).toBeGreaterThan(0);
    const hrefs = all.flatMap(({ html }) => parseHtmlPage(html).links.map((l) => l.href));
    // Spelled relative, root-relative, absolute and protocol-relative, as real pages spell them.
    expect(hrefs.some((h) => /^\d+$/.test(h))).toBe(true);
    expect(hrefs.some((h) => h.startsWith('/p/'))).toBe(true);
    expect(hrefs.some((h) => h.startsWith('http://'))).toBe(true);
    expect(hrefs.some((h) => h.startsWith('//'))).toBe(true);
    for (const scheme of ['mailto:', 'tel:', 'javascript:']) expect(hrefs.some((h) => h.startsWith(scheme))).toBe(true);
  });

  it('links to every page the simple shape links to (same graph, other markup)', () => {
    const simple = pages(build('simple'));
    const targets = (p: { url: string; html: string }) =>
      new Set(
        parseHtmlPage(p.html)
          .links.filter((l) => l.tag === 'a')
          .map((l) => resolveLink(l.href, p.url))
          .filter((u): u is string => u !== null)
          .map((u) => u.replace(/#.*$/, '')),
      );
    for (let i = 0; i < simple.length; i++) {
      const real = targets(all[i]);
      for (const url of targets(simple[i])) expect(real).toContain(url);
    }
  });

  it('is the same web for the same seed, another for another', () => {
    const again = pages(build('real'));
    expect(again.map((p) => p.html)).toEqual(all.map((p) => p.html));
    const other = pages(build('real', { seed: 2 }));
    expect(other[5].html).not.toEqual(all[5].html);
  });

  it('keeps what the crawl checks rely on: robots.txt, duplicates, redirects, errors, private pages', () => {
    const host = web.hosts[0].name;
    expect(web.reply(host, '/robots.txt')!.body.toString()).toContain('Disallow: /private/');
    expect(web.reply(host, '/d/7')!.body).toBe(web.reply(host, '/p/7')!.body);
    expect(web.reply(host, '/r/7')).toMatchObject({ status: 301, location: '/p/7' });
    expect(web.reply(host, '/missing/7')!.status).toBe(404);
    expect(web.reply(host, '/err/7')!.status).toBe(500);
    expect(web.disallowed(host, '/private/7')).toBe(true);
  });
});
