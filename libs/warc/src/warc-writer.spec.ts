import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CDXIndexer, WARCParser, WARCRecord } from 'warcio';
import { ContentStore, FsContentStore, MinioContentStore } from '@crawler/content-store';
import { collectKeys, S3TestServer, startS3TestServer } from '@crawler/content-store/testing';
import { surt } from './cdx';
import { FetchCapture, WarcClock, WarcWriter, WarcWriterOptions } from './warc-writer';

// Read back --------------------------------------------------------------------------------------------------

interface ReadRecord {
  type: string;
  header(name: string): string | null;
  record: WARCRecord;
  /** The whole block (HTTP head + payload for response/request/revisit). */
  block: Buffer;
  /** What follows the HTTP head; null for records without one. */
  payload: Buffer | null;
}

/** Every record of a .warc.gz, read twice by warcio: once raw (the block), once with the HTTP head parsed. */
async function readWarc(bytes: Buffer): Promise<ReadRecord[]> {
  const blocks: Buffer[] = [];
  for await (const record of new WARCParser([bytes], { parseHttp: false })) blocks.push(Buffer.from(await record.readFully()));
  const out: ReadRecord[] = [];
  for await (const record of new WARCParser([bytes])) {
    const payload = Buffer.from(await record.readFully());
    out.push({
      type: record.warcType,
      header: (name) => record.warcHeaders.headers.get(name) ?? null,
      record,
      block: blocks[out.length],
      payload: record.httpHeaders ? payload : null,
    });
  }
  expect(out).toHaveLength(blocks.length);
  return out;
}

/** RFC 4648 base32 decoding, written independently of the writer's encoder. */
function fromBase32(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bits = [...text].map((c) => alphabet.indexOf(c).toString(2).padStart(5, '0')).join('');
  return Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
}

function expectSha1(digest: string | null, data: Buffer): void {
  expect(digest).toMatch(/^sha1:[A-Z2-7]{32}$/);
  expect(fromBase32(digest!.slice(5))).toEqual(createHash('sha1').update(data).digest());
}

/** A gzip member located by offset/length, parsed on its own: exactly one record. */
async function recordAt(file: Buffer, offset: number, length: number): Promise<ReadRecord> {
  const member = file.subarray(offset, offset + length);
  expect(gunzipSync(member).subarray(0, 9).toString()).toBe('WARC/1.1\r'); // one whole member, nothing before it
  const records = await readWarc(Buffer.from(member));
  expect(records).toHaveLength(1);
  return records[0];
}

async function warcioCdxj(filename: string, bytes: Buffer): Promise<string[]> {
  const indexer = new CDXIndexer({ format: 'cdxj' });
  const lines: string[] = [];
  async function* source() {
    yield new Uint8Array(bytes);
  }
  for await (const entry of indexer.iterIndex([{ filename, reader: source() }])) lines.push(indexer.serializeCDXJ(entry).trimEnd());
  return lines;
}

async function stored(store: ContentStore, key: string): Promise<Buffer> {
  const object = await store.get(key);
  if (!object) throw new Error(`missing ${key}`);
  return object.body;
}

async function warcKeys(store: ContentStore, prefix: string): Promise<string[]> {
  return (await collectKeys(store.list(`${prefix}/`))).filter((k) => k.endsWith('.warc.gz')).sort();
}

// Test clock -------------------------------------------------------------------------------------------------

class ManualClock implements WarcClock {
  private timers: Array<{ at: number; callback: () => void; live: boolean }> = [];
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  setTimer(callback: () => void, ms: number) {
    const timer = { at: this.time + ms, callback, live: true };
    this.timers.push(timer);
    return { cancel: () => (timer.live = false) };
  }
  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((t) => t.live && t.at <= this.time);
    this.timers = this.timers.filter((t) => !due.includes(t));
    for (const timer of due) {
      timer.live = false;
      timer.callback();
    }
  }
  get pending(): number {
    return this.timers.filter((t) => t.live).length;
  }
}

const T0 = Date.parse('2024-05-06T07:08:09.010Z');

function fetchOf(n: number, body: Buffer = Buffer.from(`<html><title>page ${n}</title></html>`)): FetchCapture {
  return {
    url: `http://site${n % 3}.example/page/${n}?b=2&a=1`,
    fetchedAt: new Date(T0 + n * 1000).toISOString(),
    ip: '127.0.0.1',
    requestHeaders: { 'user-agent': 'test-crawler/1.0', accept: '*/*' },
    status: 200,
    responseHeaders: { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) },
    body,
  };
}

// The suite, run against both drivers --------------------------------------------------------------------------

function warcWriterSuite(driver: string, makeStore: () => Promise<ContentStore>, cleanup: (store: ContentStore) => Promise<void>) {
  describe(`WarcWriter on ${driver}`, () => {
    let store: ContentStore;
    let prefix: string;
    let clock: ManualClock;
    const writers: WarcWriter[] = [];

    const writer = (options: Partial<WarcWriterOptions> = {}) => {
      const w = new WarcWriter(
        store,
        { prefix, rotateBytes: 64 * 1024 * 1024, rotateMs: 60_000, software: 'crawler/0.1.0 (test)', operator: 'tests', filenamePrefix: 'crawl-r1', ...options },
        clock,
      );
      writers.push(w);
      return w;
    };

    beforeEach(async () => {
      store = await makeStore();
      prefix = `warc-${randomUUID().slice(0, 8)}`;
      clock = new ManualClock(T0);
    });
    afterEach(async () => {
      for (const w of writers.splice(0)) await w.close().catch(() => undefined);
      await cleanup(store);
    });

    it('writes warcinfo, request/response pairs and a revisit that warcio reads back, digests verified', async () => {
      const w = writer();
      const pages = [fetchOf(1), fetchOf(2, randomBytes(3000)), fetchOf(3, Buffer.alloc(0))];
      pages[1].responseHeaders = {
        'content-type': 'application/octet-stream',
        'content-encoding': 'gzip',
        'transfer-encoding': 'chunked',
        etag: '"abc"',
      };
      pages[1].truncated = 'length';
      const written = [];
      for (const page of pages) written.push(await w.writeFetch(page));
      const revisit = await w.writeRevisit({
        url: 'http://site1.example/page/1?b=2&a=1',
        fetchedAt: '2024-05-07T00:00:00.000Z',
        status: 200,
        responseHeaders: { 'content-type': 'text/html; charset=utf-8', 'content-length': String(pages[0].body.length) },
        refersToUri: pages[0].url,
        refersToDate: written[0].warcDate,
        refersToRecordId: written[0].response.recordId,
        payloadDigest: written[0].payloadDigest,
      });
      await w.close();

      const [key] = await warcKeys(store, prefix);
      expect(await warcKeys(store, prefix)).toEqual([`${prefix}/crawl-r1-20240506070809010-00000.warc.gz`]);
      expect(written.every((x) => x.response.key === key && x.request.key === key)).toBe(true);
      const file = await stored(store, key);
      const records = await readWarc(file);
      expect(records.map((r) => r.type)).toEqual(['warcinfo', 'response', 'request', 'response', 'request', 'response', 'request', 'revisit']);

      for (const r of records) {
        expect(r.record.warcHeaders.protocol).toBe('WARC/1.1');
        expect(r.header('WARC-Record-ID')).toMatch(/^<urn:uuid:[0-9a-f-]{36}>$/);
        expect(Number(r.header('Content-Length'))).toBe(r.block.length);
        expectSha1(r.header('WARC-Block-Digest'), r.block);
      }
      const ids = records.map((r) => r.header('WARC-Record-ID'));
      expect(new Set(ids).size).toBe(ids.length);

      const [info] = records;
      expect(info.header('WARC-Filename')).toBe(path.basename(key));
      expect(info.header('Content-Type')).toBe('application/warc-fields');
      expect(info.block.toString()).toContain('software: crawler/0.1.0 (test)\r\n');
      expect(info.block.toString()).toContain('operator: tests\r\n');
      expect(info.block.toString()).toContain('format: WARC File Format 1.1\r\n');
      expect(records.slice(1).every((r) => r.header('WARC-Warcinfo-ID') === info.header('WARC-Record-ID'))).toBe(true);

      for (let i = 0; i < pages.length; i++) {
        const [response, request] = [records[1 + 2 * i], records[2 + 2 * i]];
        const page = pages[i];
        expect(response.record.warcTargetURI).toBe(page.url);
        expect(request.record.warcTargetURI).toBe(page.url);
        expect(response.record.warcDate).toBe(page.fetchedAt);
        expect(response.header('WARC-IP-Address')).toBe('127.0.0.1');
        expect(response.header('Content-Type')).toBe('application/http;msgtype=response');
        expect(request.header('Content-Type')).toBe('application/http;msgtype=request');
        expect(request.header('WARC-Concurrent-To')).toBe(response.header('WARC-Record-ID'));
        expect(response.record.httpHeaders?.statusCode).toBe(200);
        expect(response.record.httpHeaders?.statusText).toBe('OK');
        expect(response.payload).toEqual(page.body);
        expectSha1(response.header('WARC-Payload-Digest'), page.body);
        expect(response.header('WARC-Payload-Digest')).toBe(written[i].payloadDigest);
        expect(response.record.httpHeaders?.headers.get('content-length')).toBe(String(page.body.length));
        expect(request.record.httpHeaders?.method).toBe('GET');
        expect(request.record.httpHeaders?.requestPath).toBe(new URL(page.url).pathname + new URL(page.url).search);
        expect(request.record.httpHeaders?.headers.get('host')).toBe(new URL(page.url).host);
        expect(request.record.httpHeaders?.headers.get('user-agent')).toBe('test-crawler/1.0');
        expect(request.payload).toEqual(Buffer.alloc(0));
        expect(written[i].response.recordId).toBe(response.header('WARC-Record-ID'));
        expect(written[i].request.recordId).toBe(request.header('WARC-Record-ID'));
      }

      // The decoded body is stored with its codings renamed: a reader decoding "as served" gets the body back.
      const coded = records[3];
      expect(coded.record.httpHeaders?.headers.get('content-encoding')).toBeNull();
      expect(coded.record.httpHeaders?.headers.get('x-orig-content-encoding')).toBe('gzip');
      expect(coded.record.httpHeaders?.headers.get('x-orig-transfer-encoding')).toBe('chunked');
      expect(coded.header('WARC-Truncated')).toBe('length');
      const rereadCoded = (await readWarc(file))[3].record;
      expect(Buffer.from(await rereadCoded.readFully(true))).toEqual(pages[1].body);

      const rev = records[7];
      expect(rev.header('WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/identical-payload-digest');
      expect(rev.record.warcRefersToTargetURI).toBe(pages[0].url);
      expect(rev.record.warcRefersToDate).toBe(pages[0].fetchedAt);
      expect(rev.header('WARC-Refers-To')).toBe(written[0].response.recordId);
      expect(rev.record.warcPayloadDigest).toBe(written[0].payloadDigest);
      expect(rev.record.httpHeaders?.statusCode).toBe(200);
      expect(rev.payload).toEqual(Buffer.alloc(0)); // headers only
      expect(rev.header('WARC-Record-ID')).toBe(revisit.revisit.recordId);
    });

    it('indexes each response and revisit in a sorted CDXJ whose offsets locate the right gzip member', async () => {
      const w = writer();
      const results = [];
      for (let n = 0; n < 6; n++) results.push(await w.writeFetch(fetchOf(n)));
      await w.writeRevisit({
        url: fetchOf(0).url,
        fetchedAt: '2024-05-08T00:00:00Z',
        status: 304,
        responseHeaders: { etag: '"x"' },
        refersToUri: fetchOf(0).url,
        refersToDate: results[0].warcDate,
        payloadDigest: results[0].payloadDigest,
        profile: 'server-not-modified',
        requestHeaders: { 'if-none-match': '"x"' },
      });
      await w.close();

      const [key] = await warcKeys(store, prefix);
      const file = await stored(store, key);
      const cdxKey = key.replace(/\.warc\.gz$/, '.cdxj');
      const cdxText = (await stored(store, cdxKey)).toString('utf8');
      expect(cdxText.endsWith('\n')).toBe(true);
      const lines = cdxText.trimEnd().split('\n');
      expect(lines).toHaveLength(7);
      expect([...lines].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))).toEqual(lines);

      for (const line of lines) {
        const [urlkey, timestamp] = line.split(' ', 2);
        const fields = JSON.parse(line.slice(urlkey.length + timestamp.length + 2)) as Record<string, string>;
        expect(urlkey).toBe(surt(fields.url));
        expect(fields.filename).toBe(path.basename(key));
        const r = await recordAt(file, Number(fields.offset), Number(fields.length));
        expect(r.record.warcTargetURI).toBe(fields.url);
        expect(r.record.warcPayloadDigest).toBe(`sha1:${fields.digest}`);
        expect(timestamp).toBe(r.record.warcDate!.replace(/[^0-9]/g, '').slice(0, 14));
        if (fields.mime === 'warc/revisit') {
          expect(r.type).toBe('revisit');
          expect(r.header('WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/server-not-modified');
          expect(fields.status).toBe('304');
        } else {
          expect(r.type).toBe('response');
          expect(fields).toMatchObject({ mime: 'text/html', status: '200' });
        }
      }
      // The returned locations agree with the index.
      for (const result of results) await expect(recordAt(file, result.response.offset, result.response.length)).resolves.toMatchObject({ type: 'response' });

      // Byte for byte what warcio's own indexer makes of the file (its SURT lacks pywb's trailing-slash and
      // session-id rules, so the keys are compared with ours separately above).
      const theirs = (await warcioCdxj(path.basename(key), file)).map((line) => line.slice(line.indexOf(' ') + 1));
      const ours = lines.map((line) => line.slice(line.indexOf(' ') + 1));
      expect([...ours].sort()).toEqual([...theirs].sort());
    });

    it('rotates by size: every file opens with warcinfo, all but the last reach rotateBytes, nothing lost', async () => {
      const w = writer({ rotateBytes: 4000 });
      // ~2.2 KB a fetch: two fill a file, so 13 leave one fetch for close() to store.
      const pages = Array.from({ length: 13 }, (_, n) => fetchOf(n, randomBytes(1800)));
      for (const page of pages) await w.writeFetch(page);
      const keysBeforeClose = await warcKeys(store, prefix);
      await w.close();

      const keys = await warcKeys(store, prefix);
      expect(keysBeforeClose.length).toBeGreaterThanOrEqual(3); // uploaded as they filled, not at close
      expect(keys.length).toBe(keysBeforeClose.length + 1);
      expect(keys.map((k) => k.slice(-14))).toEqual(keys.map((_, i) => `-${String(i).padStart(5, '0')}.warc.gz`));
      const bodies: Buffer[] = [];
      for (const [i, key] of keys.entries()) {
        const file = await stored(store, key);
        if (i < keys.length - 1) expect(file.length).toBeGreaterThanOrEqual(4000);
        const records = await readWarc(file);
        expect(records[0].type).toBe('warcinfo');
        expect(records[0].header('WARC-Filename')).toBe(path.basename(key));
        expect(records.filter((r) => r.type === 'warcinfo')).toHaveLength(1);
        for (const r of records) if (r.type === 'response') bodies.push(r.payload!);
        expect((await stored(store, key.replace(/\.warc\.gz$/, '.cdxj'))).toString().trimEnd().split('\n')).toHaveLength(
          records.filter((r) => r.type === 'response').length,
        );
      }
      expect(bodies).toEqual(pages.map((p) => p.body));
    });

    it('rotates by time: rotateMs after a file’s first record it is stored, and the next write opens a new one', async () => {
      const w = writer({ rotateMs: 60_000 });
      await w.writeFetch(fetchOf(1));
      clock.advance(30_000);
      await w.writeFetch(fetchOf(2));
      clock.advance(29_999);
      await w.writeFetch(fetchOf(3)); // queued behind nothing: the timer has not fired
      expect(await warcKeys(store, prefix)).toEqual([]);

      clock.advance(1); // 60 s after the first record
      await w.writeFetch(fetchOf(4)); // runs after the timer's rotation in the write queue
      const keys = await warcKeys(store, prefix);
      expect(keys).toEqual([`${prefix}/crawl-r1-20240506070809010-00000.warc.gz`]);
      const first = await readWarc(await stored(store, keys[0]));
      expect(first.filter((r) => r.type === 'response').map((r) => r.record.warcTargetURI)).toEqual([1, 2, 3].map((n) => fetchOf(n).url));

      clock.advance(60_000);
      await w.flush(); // let the second timer's upload (if any) and the flush run
      const all = await warcKeys(store, prefix);
      expect(all).toEqual([keys[0], `${prefix}/crawl-r1-20240506070909010-00001.warc.gz`]);
      const second = await readWarc(await stored(store, all[1]));
      expect(second.filter((r) => r.type === 'response').map((r) => r.record.warcTargetURI)).toEqual([fetchOf(4).url]);
      expect(clock.pending).toBe(0);
    });

    it('never interleaves concurrent writes: each response is followed by its own request', async () => {
      const w = writer({ rotateBytes: 6000 });
      const pages = Array.from({ length: 40 }, (_, n) => fetchOf(n, randomBytes(200 + ((n * 37) % 400))));
      const results = await Promise.all(pages.map((page) => w.writeFetch(page)));
      await w.close();

      const byUrl = new Map(pages.map((p) => [p.url, p.body]));
      const seen: string[] = [];
      const files = new Map<string, Buffer>();
      for (const key of await warcKeys(store, prefix)) {
        const file = await stored(store, key);
        files.set(key, file);
        const records = await readWarc(file);
        expect(records[0].type).toBe('warcinfo');
        const rest = records.slice(1);
        expect(rest.length % 2).toBe(0);
        for (let i = 0; i < rest.length; i += 2) {
          const [response, request] = [rest[i], rest[i + 1]];
          expect([response.type, request.type]).toEqual(['response', 'request']);
          expect(request.header('WARC-Concurrent-To')).toBe(response.header('WARC-Record-ID'));
          expect(request.record.warcTargetURI).toBe(response.record.warcTargetURI);
          expect(response.payload).toEqual(byUrl.get(response.record.warcTargetURI!));
          seen.push(response.record.warcTargetURI!);
        }
      }
      expect(seen).toEqual(pages.map((p) => p.url)); // in call order
      expect(files.size).toBeGreaterThan(1);
      for (const [i, result] of results.entries()) {
        const r = await recordAt(files.get(result.response.key)!, result.response.offset, result.response.length);
        expect(r.record.warcTargetURI).toBe(pages[i].url);
        const q = await recordAt(files.get(result.request.key)!, result.request.offset, result.request.length);
        expect(q.type).toBe('request');
      }
    });

    it('stores nothing for an empty writer, and refuses writes after close', async () => {
      const w = writer();
      await w.close();
      await w.close();
      expect(await collectKeys(store.list(`${prefix}/`))).toEqual([]);
      await expect(w.writeFetch(fetchOf(1))).rejects.toThrow(/writer is closed/);
      await expect(w.writeRevisit({} as never)).rejects.toThrow(/writer is closed/);
    });
  });
}

let s3: S3TestServer;
beforeAll(async () => {
  s3 = await startS3TestServer();
});
afterAll(async () => {
  await s3?.close();
});

warcWriterSuite(
  'MinioContentStore (scripts/s3-server.js)',
  () => MinioContentStore.connect({ url: s3.url, bucket: `warc-test-${randomUUID().slice(0, 18)}` }),
  async (store) => {
    for (const key of await collectKeys(store.list(''))) await store.delete(key);
  },
);

const fsRoots = new Map<ContentStore, string>();
warcWriterSuite(
  'FsContentStore',
  async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'warc-'));
    const store = new FsContentStore(root);
    fsRoots.set(store, root);
    return store;
  },
  async (store) => {
    await fs.rm(fsRoots.get(store)!, { recursive: true, force: true });
    fsRoots.delete(store);
  },
);

// Failures and bad input (filesystem store) ---------------------------------------------------------------------

/** A store whose puts fail while `failing` says so (for keys it matches). */
class FlakyStore implements ContentStore {
  failing: (key: string) => boolean = () => false;
  puts: string[] = [];
  constructor(private readonly inner: ContentStore) {}
  async put(key: string, body: Buffer, meta?: Record<string, string>) {
    if (this.failing(key)) throw new Error('S3 unavailable');
    this.puts.push(key);
    return this.inner.put(key, body, meta);
  }
  get = (key: string) => this.inner.get(key);
  getRange = (key: string, offset: number, length: number) => this.inner.getRange(key, offset, length);
  exists = (key: string) => this.inner.exists(key);
  delete = (key: string) => this.inner.delete(key);
  list = (prefix: string) => this.inner.list(prefix);
  ping = () => this.inner.ping();
}

describe('WarcWriter when the store fails', () => {
  let root: string;
  let store: FlakyStore;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'warc-flaky-'));
    store = new FlakyStore(new FsContentStore(root));
  });
  afterEach(() => fs.rm(root, { recursive: true, force: true }));

  it('keeps failed files, refuses writes past maxPendingBytes, and loses nothing it accepted', async () => {
    const errors: Error[] = [];
    const clock = new ManualClock(T0);
    const w = new WarcWriter(
      store,
      { rotateBytes: 1500, rotateMs: 60_000, maxPendingBytes: 4000, software: 's', filenamePrefix: 'r', onError: (e) => errors.push(e) },
      clock,
    );
    store.failing = () => true;
    const accepted: string[] = [];
    let refused: string | null = null;
    for (let n = 0; n < 10 && !refused; n++) {
      const page = fetchOf(n, randomBytes(1200));
      try {
        await w.writeFetch(page);
        accepted.push(page.url);
      } catch (err) {
        expect((err as Error).message).toMatch(/write refused: \d+ bytes of WARC files wait for upload \(limit 4000\).*S3 unavailable/);
        refused = page.url;
      }
    }
    expect(refused).not.toBeNull();
    expect(accepted.length).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0].message).toMatch(/warc: storing warc\/r-.*\.warc\.gz failed \(kept in memory, will be retried\): S3 unavailable/);
    await expect(w.flush()).rejects.toThrow(/S3 unavailable/);

    store.failing = () => false;
    await w.close();
    const urls: string[] = [];
    for (const key of await warcKeys(store, 'warc')) {
      for (const r of await readWarc(await stored(store, key))) if (r.type === 'response') urls.push(r.record.warcTargetURI!);
      expect(await store.exists(key.replace(/\.warc\.gz$/, '.cdxj'))).toBe(true);
    }
    expect(urls).toEqual(accepted);
  });

  it('retries on a timer while idle, and does not store a WARC twice when only its index failed', async () => {
    const errors: Error[] = [];
    const clock = new ManualClock(T0);
    const w = new WarcWriter(store, { rotateBytes: 1, rotateMs: 1000, software: 's', filenamePrefix: 'r', onError: (e) => errors.push(e) }, clock);
    store.failing = (key) => key.endsWith('.cdxj');
    await w.writeFetch(fetchOf(1)); // rotates at once (rotateBytes 1): WARC stored, index fails
    expect(errors).toHaveLength(1);
    expect(store.puts).toHaveLength(1);

    store.failing = () => false;
    clock.advance(1000); // the retry timer
    await w.flush();
    expect(store.puts.filter((k) => k.endsWith('.warc.gz'))).toHaveLength(1);
    expect(store.puts.filter((k) => k.endsWith('.cdxj'))).toHaveLength(1);
    await w.close();
  });
});

describe('WarcWriter input checks', () => {
  const store = new FlakyStore(new FsContentStore(path.join(os.tmpdir(), 'warc-unused')));
  const make = (options: Partial<WarcWriterOptions> = {}) =>
    new WarcWriter(store, { rotateBytes: 1000, rotateMs: 1000, software: 's', filenamePrefix: 'crawl-r1', ...options }, new ManualClock(T0));

  it('rejects bad options at construction', () => {
    expect(() => make({ filenamePrefix: 'a/b' })).toThrow(/filenamePrefix must be one key segment/);
    expect(() => make({ prefix: 'bad prefix' })).toThrow(/prefix "bad prefix" does not make valid keys/);
    expect(() => make({ rotateBytes: 0 })).toThrow(/rotateBytes/);
    expect(() => make({ software: '' })).toThrow(/software/);
    expect(() => make({ info: { 'bad name': 'x' } })).toThrow(/warcinfo field/);
  });

  it('rejects bad captures with a message naming the problem, writing nothing', async () => {
    const w = make();
    await expect(w.writeFetch({ ...fetchOf(1), url: 'not a url' })).rejects.toThrow(/url is not an absolute URL/);
    await expect(w.writeFetch({ ...fetchOf(1), fetchedAt: 'later' })).rejects.toThrow(/fetchedAt is not an ISO 8601/);
    await expect(w.writeFetch({ ...fetchOf(1), ip: 'localhost' })).rejects.toThrow(/not an IP address/);
    await expect(w.writeFetch({ ...fetchOf(1), payloadDigest: 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ' })).rejects.toThrow(/does not match the body/);
    await expect(w.writeFetch({ ...fetchOf(1), responseHeaders: { 'set-cookie': 'a\r\nb' } })).rejects.toThrow(/CR, LF or NUL/);
    await expect(w.writeFetch({ ...fetchOf(1), requestHeaders: { 'x\n': 'v' } })).rejects.toThrow(/not an HTTP token/);
    const base = {
      url: 'http://a.example/',
      fetchedAt: '2024-01-01T00:00:00Z',
      status: 200,
      responseHeaders: {},
      refersToUri: 'http://a.example/',
      refersToDate: '2023-01-01T00:00:00Z',
    };
    await expect(w.writeRevisit({ ...base, payloadDigest: 'md5:xyz' })).rejects.toThrow(/payloadDigest must look like sha1:/);
    await expect(w.writeRevisit({ ...base, payloadDigest: 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ', profile: 'other' as never })).rejects.toThrow(
      /unknown revisit profile/,
    );
    await w.close();
    expect(store.puts).toEqual([]);
  });
});
