import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { ContentStore, FsContentStore, MinioContentStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { pairingProblems, ReadBackRecord, readWarcFile } from '@crawler/warc/testing';
import { closeServer, listenOnLoopback } from '../support/local-server';
import { DOWNLOADER_APART } from '../support/service-processes';
import { TestWebCluster } from '../support/test-web-cluster';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { crawlTestWeb } from '../support/test-web-crawl';

const DOC = readFileSync(join(__dirname, '../../docs/crawl-config.md'), 'utf8');

/** The command after `<!-- example:archiving-crawl -->` in docs/crawl-config.md, split as a shell splits it. */
function exampleArgs(): string[] {
  const at = DOC.indexOf('<!-- example:archiving-crawl -->');
  if (at < 0) throw new Error('docs/crawl-config.md has no example archiving-crawl');
  const command = /```\w*\n([\s\S]*?)```/.exec(DOC.slice(at))![1];
  const args = [...command.trim().matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
  return args.slice(args.indexOf('--') + 1);
}

const HTML = { 'content-type': 'text/html; charset=utf-8' };
const page = (title: string, links: string[] = []) => `<!doctype html><title>${title}</title><p>${title}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}`;
const ABOUT = page('About us');
const BROKEN = '<h1>Something broke</h1>';
const GONE = '<h1>Gone</h1>';

/** The request paths the site was asked for, in order. */
const requested: string[] = [];

/**
 * archive.example.org as the example pictures it: a front page (with an ETag: refetches are conditional)
 * linking a page without validators, a byte-identical copy of it, a page that moved, one that is gone and
 * one that fails.
 */
const site = createServer((req, res) => {
  const path = req.url!;
  requested.push(path);
  const tagged = (etag: string, body: string) =>
    req.headers['if-none-match'] === etag ? res.writeHead(304, { etag }).end() : res.writeHead(200, { ...HTML, etag }).end(body);
  if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
  if (path === '/') return tagged('"home-1"', page('Home', ['/about', '/copy', '/old-news', '/gone', '/broken']));
  if (path === '/about' || path === '/copy') return void res.writeHead(200, HTML).end(ABOUT);
  if (path === '/old-news') return void res.writeHead(301, { location: '/news' }).end();
  if (path === '/news') return tagged('"news-1"', page('News'));
  if (path === '/broken') return void res.writeHead(500, HTML).end(BROKEN);
  res.writeHead(404, HTML).end(GONE);
});
let origin: string;
const hosts = { hostsFile: () => '127.0.0.1 archive.example.org\n' };
/** Recrawls within the test: the first after 300 ms instead of a day. */
const QUICK_RECRAWL = { FRONTIER_RECRAWL_INITIAL_MS: '300', FRONTIER_RECRAWL_MIN_MS: '200', FRONTIER_RECRAWL_MAX_MS: '1600' };

beforeAll(async () => {
  origin = `http://archive.example.org:${await listenOnLoopback(site)}`;
});
afterAll(async () => {
  await closeServer(site);
  removeTempDirs();
});

/** Every record of every WARC file under warc/, read back by warcio with its digests checked; every file has its CDXJ index of one line per capture. */
async function archived(store: ContentStore): Promise<ReadBackRecord[]> {
  const keys = await collectKeys(store.list('warc/'));
  const warcs = keys.filter((key) => key.endsWith('.warc.gz'));
  expect(warcs.length).toBeGreaterThan(0);
  const records: ReadBackRecord[] = [];
  for (const key of warcs) {
    const file = await readWarcFile((await store.get(key))!.body);
    const cdxj = (await store.get(key.replace(/\.warc\.gz$/, '.cdxj')))!.body.toString().trim().split('\n');
    expect(cdxj).toHaveLength(file.filter((r) => r.type === 'response' || r.type === 'revisit').length);
    records.push(...file);
  }
  return records.sort((a, b) => a.header('WARC-Date')!.localeCompare(b.header('WARC-Date')!));
}

/** What both shapes must have written for the crawl of the site. */
function expectEveryExchange(records: ReadBackRecord[]) {
  const url = (path: string) => `${origin}${path}`;
  expect(pairingProblems(records)).toEqual([]);
  const answers = records.filter((r) => r.type === 'response' || r.type === 'revisit');
  // Each request the site answered, and nothing else: robots.txt, the redirect, the errors, the revisits.
  expect(answers.map((r) => new URL(r.uri!).pathname).sort()).toEqual([...requested].sort());
  expect(answers.every((r) => r.header('WARC-IP-Address') === '127.0.0.1')).toBe(true);
  const first = (path: string) => answers.find((r) => r.uri === url(path))!;
  expect([first('/robots.txt').type, first('/robots.txt').status, first('/robots.txt').payload.toString()]).toEqual(['response', 200, 'User-agent: *\nAllow: /\n']);
  expect([first('/old-news').status, first('/old-news').header('WARC-Type')]).toEqual([301, 'response']);
  expect([first('/gone').status, first('/gone').payload.toString()]).toEqual([404, GONE]);
  expect([first('/broken').status, first('/broken').payload.toString()]).toEqual([500, BROKEN]);
  expect([first('/news').status, first('/about').payload.toString()]).toEqual([200, ABOUT]);
  // The copy's bytes were recorded at /about: a revisit pointing there.
  const about = first('/about');
  expect(first('/copy')).toMatchObject({ type: 'revisit', status: 200 });
  expect(first('/copy').header('WARC-Profile')).toBe('http://netpreserve.org/warc/1.1/revisit/identical-payload-digest');
  expect([first('/copy').header('WARC-Refers-To-Target-URI'), first('/copy').header('WARC-Refers-To-Date')]).toEqual([about.uri, about.header('WARC-Date')]);
  return { answers, url };
}

/** The recrawls: the front page answered 304 (server-not-modified), /about the same bytes (identical-payload-digest). */
function expectRevisitsOfUnchangedPages(answers: ReadBackRecord[], url: (path: string) => string) {
  const home = answers.find((r) => r.uri === url('/') && r.type === 'response')!;
  const notModified = answers.filter((r) => r.uri === url('/') && r.type === 'revisit');
  expect(notModified.length).toBeGreaterThan(0);
  for (const revisit of notModified) {
    expect([revisit.status, revisit.header('WARC-Profile')]).toEqual([304, 'http://netpreserve.org/warc/1.1/revisit/server-not-modified']);
    expect([revisit.header('WARC-Refers-To'), revisit.header('WARC-Refers-To-Date')]).toEqual([home.id, home.header('WARC-Date')]);
  }
  const unchanged = answers.filter((r) => r.uri === url('/about') && r.type === 'revisit');
  expect(unchanged.length).toBeGreaterThan(0);
  expect(unchanged.every((r) => r.header('WARC-Profile')!.endsWith('/identical-payload-digest'))).toBe(true);
}

/**
 * The example "an archiving crawl" of docs/crawl-config.md, run as written (the seed pointed at a local copy
 * of the site, the recrawl interval cut to 300 ms), read back with warcio.
 */
describe('an archiving crawl: WARC of every exchange, embedded (docs/crawl-config.md)', () => {
  let records: ReadBackRecord[];

  beforeAll(async () => {
    requested.length = 0;
    const dir = tempDir('warc-all-');
    const args = exampleArgs().map((a) => (a === 'https://archive.example.org/' ? `${origin}/` : a));
    await crawlTestWeb(hosts, dir, { args, delaySeconds: 0.05, env: QUICK_RECRAWL, timeoutMs: 60_000 });
    records = await archived(new FsContentStore(join(dir, 'content')));
  }, 90_000);

  it('records robots.txt, the redirect, the 404 and the 500 with the pages, each response paired with its request, digests right', () => {
    expectEveryExchange(records);
  });

  it('records the pages found unchanged on recrawl as revisits of their first capture', () => {
    const { answers, url } = expectEveryExchange(records);
    expectRevisitsOfUnchangedPages(answers, url);
  });
});

/** The same with every service its own process: the downloader writes the records into the bucket. */
describe('an archiving crawl: WARC of every exchange, distributed (WARC_ALL=true)', () => {
  let cluster: TestWebCluster;
  let records: ReadBackRecord[];

  beforeAll(async () => {
    requested.length = 0;
    cluster = await new TestWebCluster(hosts).start({
      env: { WARC_ALL: 'true', FRONTIER_RECRAWL: 'true', FRONTIER_MAX_PAGES: '16', FRONTIER_MIN_DELAY_MS: '50', SITEMAP_MODE: 'robots', ...QUICK_RECRAWL },
      services: DOWNLOADER_APART,
      startTimeoutMs: 90_000,
    });
    expect(await cluster.seed([`${origin}/`])).toBe(201);
    await cluster.until((s) => s.complete, 90_000, 250);
    // A stopped downloader has uploaded its last file.
    expect(await cluster.stopServices()).toEqual([0, 0, 0]);
    records = await archived(await MinioContentStore.connect({ url: cluster.s3Url, bucket: cluster.prefix }));
  }, 240_000);

  afterAll(() => cluster?.close());

  it('writes the records of every exchange to S3, from the downloader, with revisits of the unchanged pages', () => {
    const { answers, url } = expectEveryExchange(records);
    expectRevisitsOfUnchangedPages(answers, url);
  });
});
