import { gzipSync } from 'node:zlib';
import { Inject, Injectable } from '@nestjs/common';
import { ParsedPage } from '@crawler/contracts';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { CrawlStats } from '@crawler/runtime';
import { STATE_STORE, StateStore } from '@crawler/state';

export type SeenVerdict = { duplicate: false; contentKey: string } | { duplicate: true; originalUrl: string };

/**
 * Exact duplicates by the SHA-256 of the normalised text: the first page with a hash is stored (gzip,
 * content-addressed, with its metadata) and recorded in the URL store; later ones are recorded as
 * duplicates of it and go no further.
 */
@Injectable()
export class ContentSeenService {
  private readonly store: StateStore;

  constructor(
    @Inject(STATE_STORE) state: StateStore,
    @Inject(CONTENT_STORE) private readonly content: ContentStore,
    private readonly stats: CrawlStats,
  ) {
    this.store = state.namespace('content-seen');
  }

  async check(page: ParsedPage, body: Buffer): Promise<SeenVerdict> {
    // One atomic claim: the first URL with this hash owns it. A redelivered job finds itself the owner,
    // and storing again is idempotent.
    const originalUrl = await this.store.hashSetIfAbsent('original', page.contentHash, page.url);
    if (originalUrl !== null && originalUrl !== page.url) {
      await this.store.hashSet('duplicates', page.url, originalUrl);
      await this.stats.count('duplicate');
      return { duplicate: true, originalUrl };
    }
    const contentKey = `pages/${page.contentHash.slice(0, 2)}/${page.contentHash}.html.gz`;
    await this.content.put(contentKey, gzipSync(body), {
      url: page.url,
      fetchedAt: page.fetchedAt,
      status: String(page.status),
      contentType: page.contentType,
      charset: page.charset,
      contentHash: page.contentHash,
      title: page.title ?? '',
      truncated: String(page.truncated),
    });
    await this.store.hashSet(
      'urls',
      page.url,
      JSON.stringify({
        fetchedAt: page.fetchedAt,
        status: page.status,
        contentKey,
        etag: page.headers.etag,
        lastModified: page.headers['last-modified'],
      }),
    );
    await this.stats.count('stored');
    return { duplicate: false, contentKey };
  }
}
