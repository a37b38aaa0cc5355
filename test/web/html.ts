/** Deterministic filler text and the HTML templates of the test web. */
import { Prng } from './prng';

const WORDS = (
  'crawler frontier politeness robots delay fetch parse queue host page link anchor title seed ' +
  'graph breadth depth canonical duplicate hash shingle charset encoding redirect status header ' +
  'body storage bucket object worker service cluster network socket latency throughput backoff ' +
  'retry budget scope domain suffix sitemap archive index search ranking signal freshness revisit ' +
  'schedule bloom filter shard partition replica lease heartbeat metric gauge counter histogram'
).split(' ');

/** The Russian text of the windows-1251 page (a pangram: every letter of the alphabet). */
export const RUSSIAN_TEXT = 'Съешь же ещё этих мягких французских булок, да выпей чаю';

export function words(rng: Prng, min: number, max: number): string {
  const count = rng.int(min, max);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(rng.pick(WORDS));
  return out.join(' ');
}

export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface PageHtml {
  title: string;
  paragraphs: string[];
  links: { href: string; text: string }[];
  /** `<base href>` value, if the page declares one. */
  base?: string;
  lang?: string;
  charset?: string;
}

export function renderPage(page: PageHtml): string {
  const head = [
    `<meta charset="${page.charset ?? 'utf-8'}">`,
    `<title>${escapeHtml(page.title)}</title>`,
    ...(page.base === undefined ? [] : [`<base href="${escapeHtml(page.base)}">`]),
  ];
  const body = [
    `<h1>${escapeHtml(page.title)}</h1>`,
    ...page.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    '<ul>',
    ...page.links.map((l) => `<li><a href="${escapeHtml(l.href)}">${escapeHtml(l.text)}</a></li>`),
    '</ul>',
  ];
  return `<!doctype html>\n<html lang="${page.lang ?? 'en'}">\n<head>\n${head.join('\n')}\n</head>\n` + `<body>\n${body.join('\n')}\n</body>\n</html>\n`;
}

/** Body of an error answer (404, 500); names the URL so no two error pages are byte-identical. */
export function renderError(status: number, reason: string, url: string): string {
  return renderPage({
    title: `${status} ${reason}`,
    paragraphs: [`${reason}: ${url}`],
    links: [],
  });
}
