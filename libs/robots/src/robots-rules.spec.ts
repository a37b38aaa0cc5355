import robotsParser from 'robots-parser';
import { RobotsRules } from './robots-rules';

/** A small deterministic generator (mulberry32), so that a failure names a case that can be run again. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

const AGENTS = ['*', 'crawler-bot', 'Crawler-Bot/2.0', 'other', ' crawler-bot ', ''];
const PIECES = ['/', 'a', 'b', 'ab', '*', '$', '.html', '?', 'q=1', '%2f', '%7E', '~', 'é', ' ', '&'];
const FIELDS = ['User-agent', 'user-AGENT', 'Disallow', 'Allow', 'allow', 'Crawl-delay', 'Sitemap', 'Host', 'Unknown', ''];

function pattern(r: () => number): string {
  let p = r() < 0.8 ? '/' : '';
  for (let i = Math.floor(r() * 5); i > 0; i--) p += pick(r, PIECES);
  return p;
}

/** A robots.txt with the oddities real ones have: groups of several agents, rules before any agent, comments, blank and colon-less lines. */
function robotsTxt(r: () => number): string {
  const lines: string[] = [];
  for (let i = 1 + Math.floor(r() * 14); i > 0; i--) {
    const x = r();
    if (x < 0.05) lines.push('');
    else if (x < 0.1) lines.push('# a comment');
    else if (x < 0.13) lines.push('disallow /no-colon');
    else {
      const field = pick(r, FIELDS);
      const value = /agent/i.test(field) ? pick(r, AGENTS) : /delay/i.test(field) ? pick(r, ['1', 'x', '']) : pattern(r);
      lines.push(`${r() < 0.2 ? ' ' : ''}${field}${r() < 0.2 ? ' ' : ''}:${r() < 0.7 ? ' ' : ''}${value}${r() < 0.1 ? ' # note' : ''}`);
    }
  }
  return lines.join(pick(r, ['\n', '\r\n', '\r']));
}

describe('RobotsRules', () => {
  it('answers as robots-parser does, on 3,000 generated files and 20 paths each', () => {
    const r = random(9309);
    const disagreements: unknown[] = [];
    for (let file = 0; file < 3000; file++) {
      const text = robotsTxt(r);
      const token = pick(r, ['crawler-bot', 'Other', 'nobody']);
      const parser = robotsParser('http://a.test/robots.txt', text);
      const rules = RobotsRules.parse(text, token);
      for (let k = 0; k < 20; k++) {
        const url = new URL(`/${pattern(r).replace(/[*$]/g, '').replace(/^\/+/, '')}`, 'http://a.test/');
        const path = url.pathname + url.search;
        const expected = parser.isAllowed(url.href, token) ?? true;
        if (rules.allows(path) !== expected) disagreements.push({ file, text, token, path, expected });
      }
    }
    expect(disagreements.slice(0, 3)).toEqual([]);
  });

  it('picks the longest matching pattern, Allow on a tie, and the group of the token before `*`', () => {
    const rules = RobotsRules.parse(
      'User-agent: *\nDisallow: /\n\nUser-agent: crawler-bot\nDisallow: /a\nAllow: /a/b\nDisallow: /*.pdf$\nAllow: /t\nDisallow: /t',
      'Crawler-Bot',
    );
    expect(rules.allows('/x')).toBe(true);
    expect(rules.allows('/a/c')).toBe(false);
    expect(rules.allows('/a/b/c')).toBe(true);
    expect(rules.allows('/doc.pdf')).toBe(false);
    expect(rules.allows('/doc.pdf?x')).toBe(true);
    expect(rules.allows('/t')).toBe(true);
    expect(RobotsRules.parse('User-agent: *\nDisallow: /\n\nUser-agent: crawler-bot\nCrawl-delay: 1', 'crawler-bot').allows('/x')).toBe(true);
  });
});
