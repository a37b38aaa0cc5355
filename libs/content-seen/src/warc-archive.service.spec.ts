import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { WARCParser } from 'warcio';
import { loadConfig } from '@crawler/config';
import { ParsedPage, SCHEMA_VERSION } from '@crawler/contracts';
import { FsContentStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { contentHash } from '@crawler/html';
import { FileRecordsStore } from '@crawler/records';
import { WarcArchive } from './warc-archive.service';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function setup(warc = true, warcAll = false) {
  const dir = mkdtempSync(join(tmpdir(), 'warc-archive-spec-'));
  dirs.push(dir);
  const content = new FsContentStore(dir);
  const archive = new WarcArchive(
    loadConfig({}, { 'storage.warc': warc, 'storage.warcAll': warcAll }),
    content,
    new FileRecordsStore(join(dir, 'records')),
    pino({ enabled: false }),
  );
  /** Closes the archive and reads back every record as [type, target URI, payload]. */
  const records = async () => {
    await archive.onApplicationShutdown();
    const out: [string, string, string][] = [];
    for (const key of (await collectKeys(content.list('warc/'))).filter((k) => k.endsWith('.warc.gz'))) {
      for await (const r of new WARCParser([(await content.get(key))!.body])) {
        if (r.warcType !== 'warcinfo') out.push([r.warcType, r.warcTargetURI!, Buffer.from(await r.readFully()).toString()]);
      }
    }
    return out;
  };
  return { archive, records, content };
}

const TEXT = contentHash('same text');
const page = (url: string, hash = TEXT): ParsedPage => ({
  v: SCHEMA_VERSION,
  fetchId: 'f',
  url,
  depth: 0,
  status: 200,
  headers: { 'content-type': 'text/html' },
  contentType: 'text/html',
  bodyKey: 'staging/x',
  length: 0,
  truncated: false,
  fetchedAt: '2026-11-22T07:00:00.000Z',
  charset: 'UTF-8',
  charsetSource: 'http',
  noindex: false,
  nofollow: false,
  contentHash: hash,
  simhash: '0123456789abcdef',
  links: [],
});
const body = (text: string) => Buffer.from(`<p>${text}</p>`);

describe('WarcArchive', () => {
  it('archives a new page in full, a byte-identical copy as a revisit, a same-text copy in other bytes in full, and no near duplicate', async () => {
    const { archive, records } = setup();
    await archive.record(page('http://a.test/'), { body: body('same text') }, { kind: 'new', duplicate: false });
    await archive.record(page('http://a.test/copy'), { body: body('same text') }, { kind: 'exact', duplicate: true, originalUrl: 'http://a.test/' });
    await archive.record(
      page('http://a.test/restyled'),
      { body: Buffer.from('<div>same text</div>') },
      { kind: 'exact', duplicate: true, originalUrl: 'http://a.test/' },
    );
    await archive.record(
      page('http://a.test/near', contentHash('other')),
      { body: body('nearly') },
      { kind: 'near', duplicate: true, originalUrl: 'http://a.test/', distance: 2 },
    );
    expect(await records()).toEqual([
      ['response', 'http://a.test/', '<p>same text</p>'],
      ['request', 'http://a.test/', ''],
      ['revisit', 'http://a.test/copy', ''],
      ['request', 'http://a.test/copy', ''],
      ['response', 'http://a.test/restyled', '<div>same text</div>'],
      ['request', 'http://a.test/restyled', ''],
    ]);
  });

  it('writes nothing when WARC output is off, and does not read the body (a staged body is inflated on read)', async () => {
    const { archive, content } = setup(false);
    let reads = 0;
    const staged = {
      get body() {
        reads++;
        return body('x');
      },
    };
    await archive.record(page('http://a.test/'), staged, { kind: 'new', duplicate: false });
    await archive.onApplicationShutdown();
    expect(await collectKeys(content.list('warc/'))).toEqual([]);
    expect(reads).toBe(0);
  });

  it('writes nothing with WARC_ALL: the downloader records every exchange, these pages among them', async () => {
    const { archive, content } = setup(true, true);
    await archive.record(page('http://a.test/'), { body: body('x') }, { kind: 'new', duplicate: false });
    await archive.onApplicationShutdown();
    expect(await collectKeys(content.list('warc/'))).toEqual([]);
  });
});
