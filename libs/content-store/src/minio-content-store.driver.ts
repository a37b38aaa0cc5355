import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { assertRange, assertValidKey, assertValidMeta, assertValidPrefix } from './content-key';
import type { ContentStore, StoredObject } from './content-store';

export interface MinioContentStoreOptions {
  /**
   * `http(s)://ACCESS:SECRET@host:port`. Percent-encode credentials that contain `/`, `+`, `@` or `:`.
   * Port defaults to 80/443.
   */
  url: string;
  /** Created by `connect()` when missing. */
  bucket: string;
  /** @defaultValue 'us-east-1' (what MinIO expects when none is configured) */
  region?: string;
}

const META_PREFIX = 'x-amz-meta-';
const MISSING_KEY = new Set(['NoSuchKey', 'NotFound']);
const BUCKET_TAKEN = new Set(['BucketAlreadyOwnedByYou', 'BucketAlreadyExists']);

/**
 * S3 (MinIO or any S3 endpoint, path-style) through the `minio` client.
 *
 * Metadata goes into `x-amz-meta-*` headers. HTTP lower-cases header names and allows only ASCII, so both
 * names and values are encoded: values with encodeURIComponent, names with {@link encodeMetaName}. Any
 * string map therefore round-trips exactly, case included. S3 caps user metadata at 2 KB per object.
 */
export class MinioContentStore implements ContentStore {
  readonly bucket: string;
  private readonly client: Client;
  private readonly region: string;

  constructor(options: MinioContentStoreOptions) {
    this.bucket = options.bucket;
    this.region = options.region ?? 'us-east-1';
    this.client = new Client({ ...parseS3Url(options.url), region: this.region, pathStyle: true });
  }

  /** A store whose bucket exists (created here if missing). */
  static async connect(options: MinioContentStoreOptions): Promise<MinioContentStore> {
    const store = new MinioContentStore(options);
    await store.ensureBucket();
    return store;
  }

  async put(key: string, body: Buffer, meta: Record<string, string> = {}): Promise<void> {
    assertValidKey(key);
    assertValidMeta(meta);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(meta)) headers[META_PREFIX + encodeMetaName(k)] = encodeURIComponent(v);
    await this.call('put', key, () => this.client.putObject(this.bucket, key, body, body.length, headers));
  }

  async get(key: string): Promise<StoredObject | null> {
    assertValidKey(key);
    return this.call('get', key, async () => {
      let stream: Readable;
      try {
        stream = await this.client.getObject(this.bucket, key);
      } catch (err) {
        if (MISSING_KEY.has(codeOf(err))) return null;
        throw err;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      // getObject resolves to the HTTP response itself: reading its headers gives body and metadata from
      // one request, so a concurrent overwrite cannot pair one version's body with another's metadata.
      const headers = (stream as Readable & { headers?: IncomingHttpHeaders }).headers;
      const meta = headers ? decodeMeta(headers) : await this.statMeta(key);
      return { body: Buffer.concat(chunks), meta };
    });
  }

  async getRange(key: string, offset: number, length: number): Promise<Buffer | null> {
    assertValidKey(key);
    assertRange(offset, length);
    if (length === 0) return (await this.exists(key)) ? Buffer.alloc(0) : null;
    return this.call('get', key, async () => {
      let stream: Readable;
      try {
        stream = await this.client.getPartialObject(this.bucket, key, offset, length);
      } catch (err) {
        if (MISSING_KEY.has(codeOf(err))) return null;
        // A range starting past the end: S3 answers 416 (InvalidRange).
        if (codeOf(err) === 'InvalidRange') return Buffer.alloc(0);
        throw err;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    });
  }

  async exists(key: string): Promise<boolean> {
    assertValidKey(key);
    return this.call('exists', key, async () => {
      try {
        await this.client.statObject(this.bucket, key);
        return true;
      } catch (err) {
        if (MISSING_KEY.has(codeOf(err))) return false;
        throw err;
      }
    });
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    // S3 DELETE of a missing key succeeds, which is the contract.
    await this.call('delete', key, () => this.client.removeObject(this.bucket, key));
  }

  async *list(prefix: string): AsyncIterable<string> {
    assertValidPrefix(prefix);
    try {
      for await (const item of this.client.listObjectsV2(this.bucket, prefix, true)) {
        if (item.name !== undefined) yield item.name;
      }
    } catch (err) {
      throw this.wrap('list', prefix, err);
    }
  }

  async ping(): Promise<void> {
    const found = await this.call('ping', '', () => this.client.bucketExists(this.bucket));
    if (!found) throw new Error(`content store: bucket ${this.bucket} does not exist`);
  }

  private async ensureBucket(): Promise<void> {
    if (await this.call('connect', '', () => this.client.bucketExists(this.bucket))) return;
    try {
      await this.client.makeBucket(this.bucket, this.region);
    } catch (err) {
      // Another replica created it between our check and our create (some servers say BucketAlreadyExists even
      // for our own credentials); ping() below proves it is usable by us.
      if (!BUCKET_TAKEN.has(codeOf(err))) throw this.wrap('create bucket', '', err);
    }
    await this.ping();
  }

  /** Fallback when a future client stops exposing response headers on the body stream. */
  private async statMeta(key: string): Promise<Record<string, string>> {
    const stat = await this.client.statObject(this.bucket, key);
    const headers: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(stat.metaData ?? {})) headers[META_PREFIX + k] = String(v);
    return decodeMeta(headers);
  }

  private async call<T>(op: string, key: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.wrap(op, key, err);
    }
  }

  private wrap(op: string, key: string, err: unknown): Error {
    const code = codeOf(err);
    const detail = err instanceof Error ? err.message : String(err);
    return new Error(`content store: ${op} s3://${this.bucket}/${key} failed${code ? ` (${code})` : ''}: ${detail}`, {
      cause: err,
    });
  }
}

function codeOf(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
}

/** Splits `http(s)://ACCESS:SECRET@host:port` into minio client options. */
export function parseS3Url(url: string): {
  endPoint: string;
  port: number;
  useSSL: boolean;
  accessKey: string;
  secretKey: string;
} {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`content store: S3 url is not a URL (expected http://ACCESS:SECRET@host:port)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`content store: S3 url must be http: or https:, got ${u.protocol}`);
  }
  if (u.pathname !== '/' && u.pathname !== '') {
    throw new Error(`content store: S3 url must not have a path (the bucket is a separate option): ${u.pathname}`);
  }
  const useSSL = u.protocol === 'https:';
  return {
    endPoint: u.hostname.replace(/^\[(.*)\]$/, '$1'), // IPv6 literal without brackets
    port: u.port ? Number(u.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: decodeURIComponent(u.username),
    secretKey: decodeURIComponent(u.password),
  };
}

/**
 * Header-safe, reversible encoding of a metadata name into [a-z0-9-]: a-z and 0-9 stay, '-' becomes '--',
 * anything else becomes '-<utf-8 hex>-' ('contentType' → 'content-54-ype'). Underscores are avoided
 * because proxies such as nginx drop headers containing them.
 */
export function encodeMetaName(name: string): string {
  let out = '';
  for (const ch of name) {
    if (/[a-z0-9]/.test(ch)) out += ch;
    else if (ch === '-') out += '--';
    else out += `-${Buffer.from(ch, 'utf8').toString('hex')}-`;
  }
  return out;
}

export function decodeMetaName(encoded: string): string {
  // Lenient: names written by other tools (no escapes) come back as they are.
  return encoded.replace(/--|-((?:[0-9a-f]{2})+)-/g, (m, hex: string | undefined) => (hex ? Buffer.from(hex, 'hex').toString('utf8') : '-'));
}

function decodeMeta(headers: IncomingHttpHeaders): Record<string, string> {
  const meta: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(META_PREFIX) || value === undefined) continue;
    const raw = Array.isArray(value) ? value.join(',') : value;
    meta[decodeMetaName(name.slice(META_PREFIX.length))] = safeDecode(raw);
  }
  return meta;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value; // not written by this driver; keep it verbatim
  }
}
