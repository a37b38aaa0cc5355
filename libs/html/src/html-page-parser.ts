import { MAX_URL_CHARS, type RawLink } from '@crawler/contracts';
import { LeanParser } from './lean-parser';
import { parseRobotsDirectives, type RobotsDirectives } from './robots-header';
import { collapseWhitespace } from './whitespace';

export interface ParsedHtml {
  /** First `<title>` outside svg/math, whitespace-collapsed, at most 1000 characters. */
  title?: string;
  /** The `lang` attribute of `<html>`. */
  lang?: string;
  /** `href` of the first `<base>` that has one. */
  baseHref?: string;
  /** `href` of the first `<link rel=canonical>`. */
  canonical?: string;
  /** From every `<meta name=robots>` (a `none` token sets both). */
  metaRobots: RobotsDirectives;
  /**
   * a/area/link[href] and iframe/frame[src], raw (unresolved), in document order, at most `maxLinks`; then,
   * with `images`, img[src] (at most `maxLinks` more, within the contracts' limit of 100000 links a page).
   * An href longer than a message carries is cut to MAX_URL_CHARS with its `length`, so that it is counted
   * as filtered (too-long) and not lost unseen.
   */
  links: RawLink[];
  /** True when links were dropped because of `maxLinks`. */
  linksTruncated: boolean;
  /** Visible text (not script/style/noscript/template/title), whitespace-collapsed: input to content hashing. */
  text: string;
}

export interface ParseHtmlOptions {
  /** Links kept per page; the rest are dropped. @defaultValue 5000 */
  maxLinks?: number;
  /**
   * Also collect `<img src>` as links with tag 'img' (for plugins that claim images), after the other links
   * and with a budget of their own, so the page links kept are the same either way. @defaultValue false
   */
  images?: boolean;
}

const DEFAULT_MAX_LINKS = 5000;
const MAX_TITLE_CHARS = 1000;
/** The contracts' limit of links in one page message. */
const MAX_PAGE_LINKS = 100_000;

/** Link-bearing elements and the attribute holding the URL. */
const URL_ATTRIBUTE: Record<string, 'href' | 'src'> = {
  a: 'href',
  area: 'href',
  link: 'href',
  iframe: 'src',
  frame: 'src',
};
/**
 * Elements whose text is never rendered (title is shown as a caption or, in svg, a tooltip). Links inside
 * them are still collected: noscript and template links are real URLs of the site.
 */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'title']);
/** The elements whose attributes are read: links, and the few that carry page metadata. */
const WITH_ATTRIBUTES = new Set([...Object.keys(URL_ATTRIBUTE), 'html', 'base', 'meta']);
/** Foreign content: an svg `<title>` is a tooltip, not the document title. */
const FOREIGN = new Set(['svg', 'math']);
/** Elements that separate words, so `<p>a</p><p>b</p>` yields "a b", not "ab"; inline ones do not. */
const BLOCK = new Set(
  (
    'address article aside blockquote body br dd details div dl dt fieldset figcaption figure footer form ' +
    'h1 h2 h3 h4 h5 h6 head header hr li main nav ol option p pre section summary table tbody td tfoot th ' +
    'thead tr ul'
  ).split(' '),
);

/** An element's part in the text, as bits (HIDDEN_ROLE | FOREIGN_ROLE | BLOCK_ROLE): one lookup a tag. */
const HIDDEN_ROLE = 1;
const FOREIGN_ROLE = 2;
const BLOCK_ROLE = 4;
const ROLES = new Map<string, number>();
for (const [names, role] of [
  [HIDDEN, HIDDEN_ROLE],
  [FOREIGN, FOREIGN_ROLE],
  [BLOCK, BLOCK_ROLE],
] as const) {
  for (const name of names) ROLES.set(name, (ROLES.get(name) ?? 0) | role);
}

/**
 * One streaming pass of htmlparser2's tokenizer (no DOM; see LeanParser). htmlparser2 recovers from any input — unclosed
 * tags, stray bytes, an attribute cut off at EOF — so malformed HTML yields partial results, never an error.
 */
export function parseHtmlPage(html: string, options: ParseHtmlOptions = {}): ParsedHtml {
  const maxLinks = options.maxLinks ?? DEFAULT_MAX_LINKS;
  if (!Number.isInteger(maxLinks) || maxLinks < 0) {
    throw new RangeError(`maxLinks must be a non-negative integer, got ${maxLinks}`);
  }

  const result: ParsedHtml = {
    metaRobots: { noindex: false, nofollow: false },
    links: [],
    linksTruncated: false,
    text: '',
  };
  const images: RawLink[] = [];
  const text: string[] = [];
  const title: string[] = [];
  let hiddenDepth = 0;
  let foreignDepth = 0;
  let titleState: 'before' | 'in' | 'done' = 'before';
  let seenHtml = false;
  let seenBase = false;

  new LeanParser({
    wantsAttributes: (name) => WITH_ATTRIBUTES.has(name) || (name === 'img' && options.images === true),
    wantsText: () => titleState === 'in' || hiddenDepth === 0,
    onopentag(name, attrs) {
      const role = ROLES.get(name) ?? 0;
      if (role & HIDDEN_ROLE) hiddenDepth++;
      if (role & FOREIGN_ROLE) foreignDepth++;
      if (role & BLOCK_ROLE) text.push(' ');

      if (name === 'title') {
        // The document title: the first one not nested in another hidden element (depth 1 is itself).
        if (titleState === 'before' && hiddenDepth === 1 && foreignDepth === 0) titleState = 'in';
      } else if (name === 'html' && !seenHtml) {
        seenHtml = true;
        result.lang = nonEmpty(attrs.lang);
      } else if (name === 'base' && !seenBase && attrs.href !== undefined) {
        seenBase = true; // only the first base with an href counts, even an empty one
        result.baseHref = nonEmpty(attrs.href);
      } else if (name === 'meta' && attrs.name?.trim().toLowerCase() === 'robots') {
        const found = parseRobotsDirectives(attrs.content ?? '');
        result.metaRobots.noindex ||= found.noindex;
        result.metaRobots.nofollow ||= found.nofollow;
      }

      const attribute = URL_ATTRIBUTE[name];
      if (attribute) addLink(name as RawLink['tag'], attrs[attribute], attrs.rel);
      else if (name === 'img' && options.images) addImage(attrs.src);
    },
    onclosetag(name) {
      const role = ROLES.get(name) ?? 0;
      if (role & HIDDEN_ROLE && hiddenDepth > 0) hiddenDepth--;
      if (role & FOREIGN_ROLE && foreignDepth > 0) foreignDepth--;
      if (role & BLOCK_ROLE) text.push(' ');
      if (name === 'title' && titleState === 'in') titleState = 'done';
    },
    ontext(data) {
      if (titleState === 'in') title.push(data);
      else if (hiddenDepth === 0) text.push(data);
    },
  }).parse(html);

  if (images.length > 0) result.links.push(...images.slice(0, Math.max(0, MAX_PAGE_LINKS - result.links.length)));
  const collapsedTitle = collapseWhitespace(title.join(''));
  if (collapsedTitle) result.title = collapsedTitle.slice(0, MAX_TITLE_CHARS).trimEnd();
  result.text = collapseWhitespace(text.join(''));
  return result;

  function addLink(tag: RawLink['tag'], url: string | undefined, rel: string | undefined): void {
    const href = url?.trim();
    // An empty href points at the page itself.
    if (!href) return;
    const relTokens = tag === 'iframe' || tag === 'frame' ? undefined : normaliseRel(rel);
    if (tag === 'link' && result.canonical === undefined && relTokens?.split(' ').includes('canonical') && href.length <= MAX_URL_CHARS) {
      result.canonical = href;
    }
    if (result.links.length >= maxLinks) {
      result.linksTruncated = true;
      return;
    }
    const link = rawLink(href, tag);
    if (relTokens) link.rel = relTokens;
    result.links.push(link);
  }

  function addImage(url: string | undefined): void {
    const href = url?.trim();
    if (!href || images.length >= maxLinks) return;
    images.push(rawLink(href, 'img'));
  }
}

/** A link as a message carries it: an href over MAX_URL_CHARS cut to that, with its full length. */
function rawLink(href: string, tag: RawLink['tag']): RawLink {
  return href.length > MAX_URL_CHARS ? { href: href.slice(0, MAX_URL_CHARS), tag, length: href.length } : { href, tag };
}

/** rel is a set of ASCII case-insensitive tokens: lower-cased and single-spaced so consumers can split on ' '. */
function normaliseRel(rel: string | undefined): string | undefined {
  return nonEmpty(rel?.toLowerCase().replace(/\s+/g, ' '));
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
