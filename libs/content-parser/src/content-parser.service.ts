import { Inject, Injectable } from '@nestjs/common';
import { FetchedPage, ParsedPage } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { contentHash, decodeHtml, parseHtmlPage, parseXRobotsTag } from '@crawler/html';
import { productToken } from '@crawler/robots';
import { simhash64 } from '@crawler/simhash';

export type ParseResult = { ok: true; page: ParsedPage } | { ok: false; reason: string };

/**
 * Bytes → text in the right charset → title, robots directives, canonical, base and raw links, and the
 * text's two fingerprints: SHA-256 (exact duplicates) and 64-bit simhash (near duplicates).
 */
@Injectable()
export class ContentParserService {
  private readonly botName: string;
  /** `<img src>` links are collected only while a plugin is enabled (the extractor follows those a plugin claims). */
  private readonly images: boolean;

  constructor(@Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig) {
    this.botName = productToken(config.downloader.userAgent);
    this.images = (config.plugins?.enabled.length ?? 0) > 0;
  }

  parse(fetched: FetchedPage, body: Buffer): ParseResult {
    if (body.length === 0) return { ok: false, reason: 'empty' };
    if (looksBinary(body)) return { ok: false, reason: 'binary' };
    const decoded = decodeHtml(body, fetched.headers['content-type']);
    const html = parseHtmlPage(decoded.text, { maxLinks: this.config.parser.maxLinks, images: this.images });
    const header = parseXRobotsTag(fetched.headers['x-robots-tag'], this.botName);
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
        contentHash: contentHash(html.text),
        simhash: simhash64(html.text),
        links: html.links,
      },
    };
  }
}

/** NUL bytes in the first KiB mean binary, unless the page starts with a UTF-16 byte-order mark. */
function looksBinary(body: Buffer): boolean {
  if (body.length >= 2 && ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff))) return false;
  return body.subarray(0, 1024).includes(0);
}
