import { isIP } from 'node:net';
import { gzipSync } from 'node:zlib';
import { assertValidKey } from '@crawler/content-store';
import type { ContentStore } from '@crawler/content-store';
import { CdxjEntry, cdxjLine, mimeOf, sortCdxj } from './cdx';
import {
  assertSha1Digest,
  CONTENT_TYPE,
  httpRequestHead,
  httpResponseHead,
  HttpHeaders,
  newRecordId,
  REVISIT_PROFILES,
  RevisitProfile,
  serializeRecord,
  sha1Digest,
  storedResponseHeaders,
  targetUri,
  warcDate,
  warcFieldsBlock,
  WarcFields,
} from './warc-record';

export interface WarcWriterOptions {
  /** Key prefix ('/'-separated [A-Za-z0-9._-] segments) the files are stored under. @defaultValue 'warc' */
  prefix?: string;
  /** A file is closed and uploaded once its compressed size reaches this many bytes (config `storage.warcRotateBytes`). */
  rotateBytes: number;
  /** …or this many ms after its first record, whichever comes first (config `storage.warcRotateMs`). */
  rotateMs: number;
  /** The warcinfo `software` field, e.g. `crawler/0.1.0`. */
  software: string;
  /** The warcinfo `operator` field (who ran the crawl). @defaultValue omitted */
  operator?: string;
  /** First part of every file name, e.g. `crawl-<replica id>`: one key segment, so replicas never collide. */
  filenamePrefix: string;
  /** More warcinfo fields (`isPartOf`, `robots`, `description`…). @defaultValue none */
  info?: Record<string, string>;
  /**
   * Bytes of closed files that may wait in memory for an upload that keeps failing; once that much waits,
   * writes are refused (rejected before anything is recorded) until the store takes them. @defaultValue 2 × rotateBytes
   */
  maxPendingBytes?: number;
  /** Told of every failed upload (they are retried; nothing is dropped). Use it to log. @defaultValue none */
  onError?: (error: Error) => void;
}

/** Time and timers: `systemClock` in a crawl, a clock of their own in tests. */
export interface WarcClock {
  /** Epoch ms: names files and dates their warcinfo records. */
  now(): number;
  /** Calls `callback` once after `ms`; the timer must not keep the process alive. */
  setTimer(callback: () => void, ms: number): { cancel(): void };
}

export const systemClock: WarcClock = {
  now: () => Date.now(),
  setTimer(callback, ms) {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

/** How WARC-Truncated explains a body cut short (WARC 1.1 §5.13). */
export type WarcTruncatedReason = 'length' | 'time' | 'disconnect' | 'unspecified';

/** One fetch as the downloader saw it. */
export interface FetchCapture {
  /** The URL fetched (absolute http/https), WARC-Target-URI. */
  url: string;
  /** When the response arrived, ISO 8601: WARC-Date. */
  fetchedAt: string;
  /** The server's address, WARC-IP-Address. */
  ip?: string;
  /** The headers sent (a Host header is added when missing). */
  requestHeaders: HttpHeaders;
  status: number;
  /** @defaultValue the standard reason phrase of `status` */
  statusText?: string;
  /** The headers received; Content-Encoding / Transfer-Encoding / Content-Length are rewritten for the decoded body (see storedResponseHeaders). */
  responseHeaders: HttpHeaders;
  /** The body with transfer and content codings removed: the record's payload. */
  body: Buffer;
  /** `sha1:<BASE32>` of `body` if the caller already has it; checked against the body. */
  payloadDigest?: string;
  /** Set when the body was cut short (e.g. the downloader's size limit: 'length'). */
  truncated?: WarcTruncatedReason;
}

/** A refetch whose payload is identical to an earlier capture's (or a 304 to a conditional request). */
export interface RevisitCapture {
  url: string;
  fetchedAt: string;
  ip?: string;
  status: number;
  statusText?: string;
  responseHeaders: HttpHeaders;
  /** WARC-Target-URI of the record holding the payload. */
  refersToUri: string;
  /** Its WARC-Date (ISO). */
  refersToDate: string;
  /** Its WARC-Record-ID (`<urn:uuid:…>`), if known: WARC-Refers-To. */
  refersToRecordId?: string;
  /** `sha1:<BASE32>` of the payload (the earlier capture's payloadDigest). */
  payloadDigest: string;
  /** @defaultValue 'identical-payload-digest' */
  profile?: RevisitProfile;
  /** Length of the referred-to payload, when known: becomes the stored Content-Length. */
  payloadLength?: number;
  /** The headers sent; when given a request record is written too, as for a fetch. */
  requestHeaders?: HttpHeaders;
}

/** Where a record went: `key` is the WARC file's content-store key (uploaded when the file rotates). */
export interface WarcRecordLocation {
  recordId: string;
  key: string;
  filename: string;
  /** Offset and length of the record's gzip member in that file. */
  offset: number;
  length: number;
}

export interface WrittenFetch {
  warcDate: string;
  /** `sha1:<BASE32>` of the body: keep it (with the date and URL) to write revisits of this payload later. */
  payloadDigest: string;
  response: WarcRecordLocation;
  request: WarcRecordLocation;
}

export interface WrittenRevisit {
  warcDate: string;
  revisit: WarcRecordLocation;
  request?: WarcRecordLocation;
}

/** A record before it joins a file (it still lacks the WARC-Warcinfo-ID of the file it lands in). */
interface Draft {
  recordId: string;
  fields: WarcFields;
  block: Buffer;
  cdx?: Omit<CdxjEntry, 'offset' | 'length' | 'filename'>;
}

interface OpenFile {
  serial: number;
  filename: string;
  key: string;
  warcinfoId: string;
  members: Buffer[];
  size: number;
  cdx: string[];
  timer: { cancel(): void };
}

interface SealedFile {
  filename: string;
  key: string;
  body: Buffer;
  cdx: Buffer;
  records: number;
  warcStored: boolean;
}

/** Runs tasks one at a time in call order; a failed task does not stop the ones after it. */
class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * Writes WARC 1.1 files (`.warc.gz`: every record its own gzip member, each file opened by a warcinfo record)
 * and a CDXJ index beside each, into a ContentStore. Records collect in memory; a file is stored with one
 * `put` (then its `.cdxj`) when it reaches `rotateBytes`, `rotateMs` after its first record, and on
 * flush()/close(). Files are named `<prefix>/<filenamePrefix>-<yyyyMMddHHmmssSSS>-<serial>.warc.gz`
 * (the IIPC recommendation: prefix, creation time, serial).
 *
 * Writes, rotations and uploads run one at a time through a queue, so records of concurrent calls never
 * interleave and a fetch's response and request stay adjacent. A failed upload keeps its file in memory and
 * is retried (on the next write, on a timer, on flush/close); writes are refused only once `maxPendingBytes`
 * wait, so a storage outage slows the pipeline instead of losing records. What has not been
 * uploaded is lost if the process dies: at most one file plus the failed backlog.
 */
export class WarcWriter {
  private readonly prefix: string;
  private readonly maxPendingBytes: number;
  private readonly queue = new SerialQueue();
  private current: OpenFile | null = null;
  private readonly sealed: SealedFile[] = [];
  private pendingBytes = 0;
  private serial = 0;
  private retryTimer: { cancel(): void } | null = null;
  private closed = false;

  constructor(
    private readonly store: ContentStore,
    private readonly options: WarcWriterOptions,
    private readonly clock: WarcClock,
  ) {
    this.prefix = options.prefix ?? 'warc';
    if (!Number.isInteger(options.rotateBytes) || options.rotateBytes < 1) throw new Error(`warc: rotateBytes must be a positive integer, got ${options.rotateBytes}`);
    if (!(options.rotateMs > 0)) throw new Error(`warc: rotateMs must be positive, got ${options.rotateMs}`);
    if (!options.software) throw new Error('warc: software (the warcinfo software field) is required');
    if (!/^[A-Za-z0-9._-]+$/.test(options.filenamePrefix ?? '')) {
      throw new Error(`warc: filenamePrefix must be one key segment of [A-Za-z0-9._-], got ${JSON.stringify(options.filenamePrefix)}`);
    }
    try {
      assertValidKey(`${this.prefix}/${this.fileName(0, 0)}.cdxj`);
    } catch (err) {
      throw new Error(`warc: prefix ${JSON.stringify(this.prefix)} does not make valid keys: ${(err as Error).message}`);
    }
    this.maxPendingBytes = options.maxPendingBytes ?? 2 * options.rotateBytes;
    // Checked now, so a bad field fails at boot rather than at the first file.
    warcFieldsBlock(this.infoFields());
  }

  /** Writes a `response` record (status line, headers, body) and its `request` record (WARC-Concurrent-To the response). */
  async writeFetch(capture: FetchCapture): Promise<WrittenFetch> {
    this.assertOpen();
    const url = targetUri(capture.url);
    const date = warcDate(capture.fetchedAt, 'fetchedAt');
    const ip = checkedIp(capture.ip);
    if (!Buffer.isBuffer(capture.body)) throw new Error('warc: body must be a Buffer');
    const payloadDigest = sha1Digest(capture.body);
    if (capture.payloadDigest !== undefined && capture.payloadDigest !== payloadDigest) {
      throw new Error(`warc: payloadDigest ${capture.payloadDigest} does not match the body (${payloadDigest})`);
    }
    if (capture.truncated !== undefined && !['length', 'time', 'disconnect', 'unspecified'].includes(capture.truncated)) {
      throw new Error(`warc: truncated must be length, time, disconnect or unspecified, got ${JSON.stringify(capture.truncated)}`);
    }
    const headers = storedResponseHeaders(capture.responseHeaders, capture.body.length);
    const response: Draft = {
      recordId: newRecordId(),
      fields: [],
      block: Buffer.concat([httpResponseHead(capture.status, capture.statusText, headers), capture.body]),
      cdx: { url, date, mime: mimeOf(headerValue(headers, 'content-type')), status: capture.status, digest: payloadDigest },
    };
    response.fields = [
      ['WARC-Type', 'response'],
      ['WARC-Record-ID', response.recordId],
      ['WARC-Date', date],
      ['WARC-Target-URI', url],
      ...(ip ? [['WARC-IP-Address', ip] as [string, string]] : []),
      ...(capture.truncated ? [['WARC-Truncated', capture.truncated] as [string, string]] : []),
      ['Content-Type', CONTENT_TYPE.response],
      ['WARC-Payload-Digest', payloadDigest],
    ];
    const request = requestDraft(url, date, ip, capture.requestHeaders, response.recordId);
    const [responseAt, requestAt] = await this.append([response, request]);
    return { warcDate: date, payloadDigest, response: responseAt, request: requestAt };
  }

  /** Writes a `revisit` record: the new status line and headers, the payload left to the record it refers to. */
  async writeRevisit(capture: RevisitCapture): Promise<WrittenRevisit> {
    this.assertOpen();
    const url = targetUri(capture.url);
    const date = warcDate(capture.fetchedAt, 'fetchedAt');
    const ip = checkedIp(capture.ip);
    const refersToUri = targetUri(capture.refersToUri, 'refersToUri');
    const refersToDate = warcDate(capture.refersToDate, 'refersToDate');
    assertSha1Digest(capture.payloadDigest, 'payloadDigest');
    const profile = capture.profile ?? 'identical-payload-digest';
    if (!Object.hasOwn(REVISIT_PROFILES, profile)) throw new Error(`warc: unknown revisit profile ${JSON.stringify(profile)}`);
    if (capture.refersToRecordId !== undefined && !/^<[^<>\s]+>$/.test(capture.refersToRecordId)) {
      throw new Error(`warc: refersToRecordId must be a WARC-Record-ID like <urn:uuid:…>, got ${JSON.stringify(capture.refersToRecordId)}`);
    }
    if (capture.payloadLength !== undefined && !(Number.isInteger(capture.payloadLength) && capture.payloadLength >= 0)) {
      throw new Error(`warc: payloadLength must be a non-negative integer, got ${capture.payloadLength}`);
    }
    const headers = storedResponseHeaders(capture.responseHeaders, capture.payloadLength);
    const revisit: Draft = {
      recordId: newRecordId(),
      fields: [],
      block: httpResponseHead(capture.status, capture.statusText, headers),
      cdx: { url, date, mime: 'warc/revisit', status: capture.status, digest: capture.payloadDigest },
    };
    revisit.fields = [
      ['WARC-Type', 'revisit'],
      ['WARC-Record-ID', revisit.recordId],
      ['WARC-Date', date],
      ['WARC-Target-URI', url],
      ...(ip ? [['WARC-IP-Address', ip] as [string, string]] : []),
      ['WARC-Profile', REVISIT_PROFILES[profile]],
      ['WARC-Refers-To-Target-URI', refersToUri],
      ['WARC-Refers-To-Date', refersToDate],
      ...(capture.refersToRecordId ? [['WARC-Refers-To', capture.refersToRecordId] as [string, string]] : []),
      ['Content-Type', CONTENT_TYPE.response],
      ['WARC-Payload-Digest', capture.payloadDigest],
    ];
    if (!capture.requestHeaders) {
      const [revisitAt] = await this.append([revisit]);
      return { warcDate: date, revisit: revisitAt };
    }
    const request = requestDraft(url, date, ip, capture.requestHeaders, revisit.recordId);
    const [revisitAt, requestAt] = await this.append([revisit, request]);
    return { warcDate: date, revisit: revisitAt, request: requestAt };
  }

  /** Closes the current file and stores it and every file still waiting; rejects if any upload fails (they stay queued). */
  flush(): Promise<void> {
    return this.queue.run(async () => {
      this.seal();
      await this.uploadPending('strict');
    });
  }

  /** Refuses further writes, then flushes. If the flush fails, close() may be called again to retry it. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    this.retryTimer?.cancel();
    this.retryTimer = null;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('warc: the writer is closed');
  }

  private append(drafts: Draft[]): Promise<WarcRecordLocation[]> {
    return this.queue.run(async () => {
      // An earlier upload failed: try it again first, and accept nothing more once too much is waiting.
      if (this.sealed.length > 0) await this.uploadPending('refuse-when-full');
      const file = this.current ?? this.open();
      const locations = drafts.map((draft) => this.appendRecord(file, draft));
      if (file.size >= this.options.rotateBytes) {
        this.seal();
        await this.uploadPending('lenient');
      }
      return locations;
    });
  }

  private open(): OpenFile {
    const now = this.clock.now();
    const serial = this.serial++;
    const filename = `${this.fileName(now, serial)}.warc.gz`;
    const warcinfoId = newRecordId();
    const file: OpenFile = {
      serial,
      filename,
      key: `${this.prefix}/${filename}`,
      warcinfoId,
      members: [],
      size: 0,
      cdx: [],
      timer: this.clock.setTimer(() => this.rotateByTime(serial), this.options.rotateMs),
    };
    const warcinfo = serializeRecord(
      [
        ['WARC-Type', 'warcinfo'],
        ['WARC-Record-ID', warcinfoId],
        ['WARC-Date', warcDate(now)],
        ['WARC-Filename', filename],
        ['Content-Type', CONTENT_TYPE.warcinfo],
      ],
      warcFieldsBlock(this.infoFields()),
    );
    this.addMember(file, gzipSync(warcinfo));
    this.current = file;
    return file;
  }

  private appendRecord(file: OpenFile, draft: Draft): WarcRecordLocation {
    const member = gzipSync(serializeRecord([...draft.fields, ['WARC-Warcinfo-ID', file.warcinfoId]], draft.block));
    const offset = this.addMember(file, member);
    if (draft.cdx) file.cdx.push(cdxjLine({ ...draft.cdx, offset, length: member.length, filename: file.filename }));
    return { recordId: draft.recordId, key: file.key, filename: file.filename, offset, length: member.length };
  }

  private addMember(file: OpenFile, member: Buffer): number {
    const offset = file.size;
    file.members.push(member);
    file.size += member.length;
    return offset;
  }

  private rotateByTime(serial: number): void {
    this.queue
      .run(async () => {
        if (this.current?.serial !== serial) return; // already rotated by size or flushed
        this.seal();
        await this.uploadPending('lenient');
      })
      .catch((err) => this.report(err as Error));
  }

  /** Moves the current file (if any) to the upload queue. */
  private seal(): void {
    const file = this.current;
    if (!file) return;
    file.timer.cancel();
    this.current = null;
    const body = Buffer.concat(file.members);
    this.sealed.push({
      filename: file.filename,
      key: file.key,
      body,
      cdx: Buffer.from(
        sortCdxj(file.cdx)
          .map((line) => `${line}\n`)
          .join(''),
        'utf8',
      ),
      records: file.members.length,
      warcStored: false,
    });
    this.pendingBytes += body.length;
  }

  /**
   * Stores waiting files oldest first, stopping at the first failure. 'strict' rethrows it; 'refuse-when-full'
   * rethrows only when more than maxPendingBytes wait; 'lenient' reports it and schedules a retry.
   */
  private async uploadPending(mode: 'strict' | 'refuse-when-full' | 'lenient'): Promise<void> {
    while (this.sealed.length > 0) {
      const file = this.sealed[0];
      try {
        await this.upload(file);
      } catch (err) {
        const error = new Error(`warc: storing ${file.key} failed (kept in memory, will be retried): ${(err as Error).message}`, { cause: err });
        this.report(error);
        this.scheduleRetry();
        if (mode === 'strict') throw error;
        if (mode === 'refuse-when-full' && this.pendingBytes >= this.maxPendingBytes) {
          throw new Error(
            `warc: write refused: ${this.pendingBytes} bytes of WARC files wait for upload (limit ${this.maxPendingBytes}); last failure: ${error.message}`,
            { cause: err },
          );
        }
        return;
      }
      this.sealed.shift();
      this.pendingBytes -= file.body.length;
    }
  }

  /** The WARC first, then its index: an index never points into a file that is not there. */
  private async upload(file: SealedFile): Promise<void> {
    if (!file.warcStored) {
      await this.store.put(file.key, file.body, { contentType: 'application/warc', records: String(file.records) });
      file.warcStored = true;
    }
    await this.store.put(file.key.replace(/\.warc\.gz$/, '.cdxj'), file.cdx, { contentType: 'application/cdxj', warc: file.filename });
  }

  /** Keeps retrying failed uploads while the writer is idle (writes and flushes retry on their own). */
  private scheduleRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = this.clock.setTimer(() => {
      this.retryTimer = null;
      this.queue.run(() => this.uploadPending('lenient')).catch((err) => this.report(err as Error));
    }, this.options.rotateMs);
  }

  private report(error: Error): void {
    this.options.onError?.(error);
  }

  private fileName(now: number, serial: number): string {
    const stamp = new Date(now)
      .toISOString()
      .replace(/[^0-9]/g, '')
      .slice(0, 17);
    return `${this.options.filenamePrefix}-${stamp}-${String(serial).padStart(5, '0')}`;
  }

  private infoFields(): Record<string, string> {
    return {
      software: this.options.software,
      format: 'WARC File Format 1.1',
      conformsTo: 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
      ...(this.options.operator ? { operator: this.options.operator } : {}),
      ...this.options.info,
    };
  }
}

function requestDraft(url: string, date: string, ip: string | undefined, headers: HttpHeaders, concurrentTo: string): Draft {
  const recordId = newRecordId();
  return {
    recordId,
    block: httpRequestHead(url, headers),
    fields: [
      ['WARC-Type', 'request'],
      ['WARC-Record-ID', recordId],
      ['WARC-Date', date],
      ['WARC-Target-URI', url],
      ['WARC-Concurrent-To', concurrentTo],
      ...(ip ? [['WARC-IP-Address', ip] as [string, string]] : []),
      ['Content-Type', CONTENT_TYPE.request],
    ],
  };
}

function checkedIp(ip: string | undefined): string | undefined {
  if (ip === undefined || ip === '') return undefined;
  if (isIP(ip) === 0) throw new Error(`warc: ip ${JSON.stringify(ip)} is not an IP address`);
  return ip;
}

function headerValue(headers: Array<[string, string]>, name: string): string | undefined {
  return headers.find(([n]) => n.toLowerCase() === name)?.[1];
}
