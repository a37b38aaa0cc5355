import { createHash } from 'node:crypto';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { CONTENT_STORE, ContentStore } from '@crawler/content-store';
import { LOGGER, Logger } from '@crawler/logging';
import { RECORDS_STORE, RecordsStore } from '@crawler/records';
import { sha1Digest, WarcWriter, warcSeriesWriter } from '@crawler/warc';
import type { FetchResponse } from './http-fetcher';

/** One request the downloader made and the response it got. */
export interface Exchange {
  url: string;
  /** The address the request went to (WARC-IP-Address). */
  address: string;
  response: FetchResponse;
  /** The hash of the body the last fetch of this URL got (`revisit.bodyHash`), sent with a conditional request. */
  previousBodyHash?: string;
}

/**
 * The body hash the frontier keeps per URL to tell an unchanged page (a SHA-256, 22 characters): here it
 * also names the capture that holds a payload, so that a 304 (whose request carries the previous body's
 * hash) finds the record it stands for.
 */
export function bodyHash(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 22);
}

/** Captures are kept by a key of their own, apart from content-seen's content hashes. */
const captureKey = (hash: string) => `body:${hash}`;

/**
 * `WARC_ALL`: every exchange of the downloader in the WARC files (content-seen's WarcArchive then writes
 * none). Each response (any status: robots.txt, redirects, 4xx, 5xx, sitemaps, plugin types) becomes a
 * response record paired with a request record of the headers sent, both with the address asked. Two
 * exchanges become revisit records instead, referring to the record that holds their payload:
 *
 * - a 304 to a conditional request: profile server-not-modified, the payload the previous fetch got;
 * - a 2xx whose whole body is a payload already recorded (the same page unchanged, or the same bytes at
 *   another URL): profile identical-payload-digest.
 *
 * A body cut at the downloader's limit is recorded as read, with `WARC-Truncated: length`; a 2xx body of a
 * type nobody wanted is never read, and is recorded empty with `WARC-Truncated: unspecified`. Payloads are
 * found again through the records store (the WARC captures, keyed `body:<hash>`), so every downloader
 * replica finds every other's.
 */
@Injectable()
export class ExchangeArchive implements OnApplicationShutdown {
  private readonly writer?: WarcWriter;

  constructor(
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
    @Inject(CONTENT_STORE) content: ContentStore,
    @Inject(RECORDS_STORE) private readonly records: RecordsStore,
    @Inject(LOGGER) logger: Logger,
  ) {
    const { warcAll, warcRotateBytes, warcRotateMs } = config.storage;
    if (!warcAll) return;
    this.writer = warcSeriesWriter(
      content,
      { crawl: config.prefix, software: config.downloader.userAgent, rotateBytes: warcRotateBytes, rotateMs: warcRotateMs },
      (error) => logger.error({ event: 'warc-error', err: error }, 'WARC upload failed; will retry'),
    );
  }

  /** For FetchOptions.readUnwanted: a response that is not 2xx has its body read for the record (error pages, redirects'). */
  readonly readUnwanted = (status: number): boolean => this.writer !== undefined && (status < 200 || status >= 300);

  async record(exchanges: readonly Exchange[]): Promise<void> {
    for (const exchange of exchanges) await this.recordOne(exchange);
  }

  private async recordOne({ url, address, response, previousBodyHash }: Exchange): Promise<void> {
    if (!this.writer) return;
    const common = { url, fetchedAt: response.requestedAt, ip: address, status: response.status, responseHeaders: response.headers };
    const requestHeaders = withoutSecrets(response.requestHeaders);
    if (response.status === 304 && previousBodyHash) {
      const [capture] = await this.records.capturesOf([captureKey(previousBodyHash)]);
      if (capture) {
        await this.writer.writeRevisit({ ...common, ...refersTo(capture), profile: 'server-not-modified', requestHeaders });
        return;
      }
    }
    const body = response.body ?? response.unwantedBody;
    // Only a whole 2xx payload stands for others: an error page or a cut body is recorded each time.
    const key = body?.length && !response.truncated && response.status >= 200 && response.status < 300 ? captureKey(bodyHash(body)) : undefined;
    if (key && body) {
      const [capture] = await this.records.capturesOf([key]);
      if (capture && capture.digest === sha1Digest(body)) {
        await this.writer.writeRevisit({ ...common, ...refersTo(capture), payloadLength: body.length, requestHeaders });
        return;
      }
    }
    const written = await this.writer.writeFetch({
      ...common,
      requestHeaders,
      body: body ?? Buffer.alloc(0),
      ...(response.truncated ? { truncated: 'length' as const } : unread(response) ? { truncated: 'unspecified' as const } : {}),
    });
    if (key) {
      await this.records.recordCaptures([{ contentHash: key, url, date: written.warcDate, digest: written.payloadDigest, recordId: written.response.recordId }]);
    }
  }

  /** Runs after the queues have drained: the last file is uploaded. */
  async onApplicationShutdown(): Promise<void> {
    await this.writer?.close();
  }
}

function refersTo(capture: { url: string; date: string; digest: string; recordId: string }) {
  return { refersToUri: capture.url, refersToDate: capture.date, refersToRecordId: capture.recordId, payloadDigest: capture.digest };
}

/** A body that was there and was not read (a type nobody wanted). */
function unread(response: FetchResponse): boolean {
  if (response.body || response.unwantedBody) return false;
  return response.status !== 204 && response.headers['content-length'] !== '0';
}

/**
 * Request headers that carry a credential (a session cookie, a login, a proxy's) are recorded with their names
 * and their values hidden: a WARC is shared and published more often than a crawl's settings are, and the
 * crawler writes no secret to a file. What the site answered is kept whole.
 */
const SECRET_HEADERS = new Set(['cookie', 'authorization', 'proxy-authorization']);

function withoutSecrets(headers: Record<string, string>): Record<string, string> {
  let hidden: Record<string, string> | undefined;
  for (const name of Object.keys(headers)) {
    if (!SECRET_HEADERS.has(name.toLowerCase())) continue;
    hidden ??= { ...headers };
    hidden[name] = '(hidden)';
  }
  return hidden ?? headers;
}
