import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { ParsedPage } from '@crawler/contracts';
import { CONTENT_STORE, ContentStore, StagedBody } from '@crawler/content-store';
import { LOGGER, Logger } from '@crawler/logging';
import { RECORDS_STORE, RecordsStore } from '@crawler/records';
import { sha1Digest, WarcWriter, warcSeriesWriter } from '@crawler/warc';
import type { SeenDecision } from './content-seen.service';

/**
 * The optional WARC 1.1 archive (`WARC_ENABLED`): each new page becomes a response record and its request
 * record; an exact duplicate whose bytes are identical to its original's becomes a revisit record pointing
 * at the original's capture (same text in different bytes is archived in full: an archive keeps bytes).
 * Near duplicates are not archived, as they are not stored. Files are written straight to the content store
 * (S3) under `warc/`, with a CDXJ index each, one series per process; see libs/warc.
 *
 * With `WARC_ALL` this archive writes nothing: the downloader's ExchangeArchive records every exchange instead.
 *
 * Records wait in memory until their file rotates (WARC_ROTATE_BYTES / WARC_ROTATE_MS) or the service stops:
 * a process killed outright loses its open file's records (its pages are stored all the same).
 */
@Injectable()
export class WarcArchive implements OnApplicationShutdown {
  private readonly writer?: WarcWriter;

  constructor(
    @Inject(CRAWLER_CONFIG) private readonly config: CrawlerConfig,
    @Inject(CONTENT_STORE) content: ContentStore,
    /** Content hash → its capture (what a revisit record needs): one per stored page. */
    @Inject(RECORDS_STORE) private readonly records: RecordsStore,
    @Inject(LOGGER) logger: Logger,
  ) {
    const { warc, warcAll, warcRotateBytes, warcRotateMs } = config.storage;
    // With WARC_ALL the downloader records every exchange, these pages among them.
    if (!warc || warcAll) return;
    this.writer = warcSeriesWriter(
      content,
      { crawl: config.prefix, software: config.downloader.userAgent, rotateBytes: warcRotateBytes, rotateMs: warcRotateMs },
      (error) => logger.error({ event: 'warc-error', err: error }, 'WARC upload failed; will retry'),
    );
  }

  /** `staged.body` is read only here, when a record is written: a bundled body is inflated on first read. */
  async record(page: ParsedPage, staged: Pick<StagedBody, 'body'>, verdict: SeenDecision): Promise<void> {
    if (!this.writer || verdict.kind === 'near') return;
    const body = staged.body;
    const requestHeaders = { 'user-agent': this.config.downloader.userAgent };
    if (verdict.kind === 'exact') {
      const [original] = await this.records.capturesOf([page.contentHash]);
      const digest = sha1Digest(body);
      if (original?.digest === digest) {
        await this.writer.writeRevisit({
          url: page.url,
          fetchedAt: page.fetchedAt,
          status: page.status,
          responseHeaders: page.headers,
          refersToUri: original.url,
          refersToDate: original.date,
          refersToRecordId: original.recordId,
          payloadDigest: digest,
          payloadLength: body.length,
          requestHeaders,
        });
        return;
      }
    }
    const written = await this.writer.writeFetch({
      url: page.url,
      fetchedAt: page.fetchedAt,
      requestHeaders,
      status: page.status,
      responseHeaders: page.headers,
      body,
      ...(page.truncated ? { truncated: 'length' as const } : {}),
    });
    if (verdict.kind === 'new') {
      await this.records.recordCaptures([
        { contentHash: page.contentHash, url: page.url, date: written.warcDate, digest: written.payloadDigest, recordId: written.response.recordId },
      ]);
    }
  }

  /** Runs after the queues have drained (RuntimeModule closes them first): the last file is uploaded. */
  async onApplicationShutdown(): Promise<void> {
    await this.writer?.close();
  }
}
