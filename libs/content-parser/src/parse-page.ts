import type { FetchedPage, ParsedPage } from '@crawler/contracts';
import { contentHash, decodeHtml, parseHtmlPage, parseXRobotsTag } from '@crawler/html';
import { simhash64 } from '@crawler/simhash';

export type ParseResult = { ok: true; page: ParsedPage } | { ok: false; reason: string };

export interface ParsePageOptions {
  /** Links kept per page. */
  maxLinks: number;
  /** Collect `<img src>` too (a plugin is enabled). */
  images: boolean;
  /** Our robots product token, for `X-Robots-Tag: <bot>: …`. */
  botName: string;
}

/**
 * Bytes → text in the right charset → title, robots directives, canonical, base and raw links, and the
 * text's two fingerprints: SHA-256 (exact duplicates) and 64-bit simhash (near duplicates). A pure function
 * of its arguments, so it runs the same in a worker thread (ParseThreads).
 */
export function parsePage(fetched: FetchedPage, body: Buffer, options: ParsePageOptions): ParseResult {
  if (body.length === 0) return { ok: false, reason: 'empty' };
  if (looksBinary(body)) return { ok: false, reason: 'binary' };
  const decoded = decodeHtml(body, fetched.headers['content-type']);
  const html = parseHtmlPage(decoded.text, { maxLinks: options.maxLinks, images: options.images });
  const header = parseXRobotsTag(fetched.headers['x-robots-tag'], options.botName);
  return {
    ok: true,
    page: {
      ...fetched,
      charset: decoded.charset,
      charsetSource: decoded.source,
      title: html.title,
      lang: html.lang,
      noindex: html.metaRobots.noindex || header.noindex,
      nofollow: html.metaRobots.nofollow || header.nofollow,
      canonical: html.canonical,
      baseHref: html.baseHref,
      contentHash: contentHash(html.text, { collapsed: true }),
      simhash: simhash64(html.text),
      links: html.links,
    },
  };
}

/** NUL bytes in the first KiB mean binary, unless the page starts with a UTF-16 byte-order mark. */
function looksBinary(body: Buffer): boolean {
  if (body.length >= 2 && ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff))) return false;
  return body.subarray(0, 1024).includes(0);
}
