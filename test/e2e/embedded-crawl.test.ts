import { join } from 'node:path';
import { decode } from 'iconv-lite';
import { WARCParser } from 'warcio';
import { FsContentStore, SegmentedPageStore } from '@crawler/content-store';
import { collectKeys } from '@crawler/content-store/testing';
import { TestWeb } from '../web/test-web';
import { expectedStoredPages, expectPoliteCompleteCrawl } from './crawl-expectations';
import { storedPages } from '../support/stored-pages';
import { removeTempDirs, tempDir } from '../support/temp-dirs';
import { runCrawlCli } from '../support/run-crawl-cli';
import { QUICK_ROBOTS_GIVE_UP_ENV, ROBOTS_ERROR_TTL_MS, ROBOTS_UNREACHABLE_MAX_MS } from '../support/test-web-cluster';
import { crawlTestWeb, FOLLOW_EVERY_LINK, IN_MEMORY_TEST_ENV, readFetchLog } from '../support/test-web-crawl';
const DELAY_S = 0.2;

afterAll(removeTempDirs);

/** The README's first command, as a newcomer runs it, against the local test web: no Redis, no S3. */
describe('embedded crawl (npm run crawl)', () => {
  let web: TestWeb;
  let out: string;
  let summary: Record<string, any>;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 200 });
    out = tempDir('crawl-e2e-');
    summary = await crawlTestWeb(web, out, { args: [...web.seeds(), ...FOLLOW_EVERY_LINK], delaySeconds: DELAY_S, env: QUICK_ROBOTS_GIVE_UP_ENV });
  }, 150_000);

  afterAll(() => web?.close());
  const store = () => new FsContentStore(join(out, 'content'));

  it('terminates on its own and says so', () => {
    expect(summary.complete).toBe(true);
    expect(summary.pagesFetched).toBe(web.expected.reachable.size);
    // One robots.txt per host; a host whose robots.txt fails is tried again at most every ROBOTS_ERROR_TTL_MS
    // and set aside once it has failed for ROBOTS_UNREACHABLE_MAX_MS, reported by name.
    const counts = web.requestCountByUrl();
    // Tries at least 0.75 × ROBOTS_ERROR_TTL_MS apart (jitter), plus the first and the last, on the give-up time.
    const most = Math.ceil(Number(ROBOTS_UNREACHABLE_MAX_MS) / (Number(ROBOTS_ERROR_TTL_MS) * 0.75)) + 2;
    for (const host of web.roles.robotsError) {
      const n = counts.get(`${web.origin(host)}/robots.txt`);
      expect(n).toBeGreaterThanOrEqual(2);
      expect(n).toBeLessThanOrEqual(most);
    }
    expect(summary.hostsSetAside.map((h: { host: string; reason: string }) => `${h.host} ${h.reason}`).sort()).toEqual(
      web.roles.robotsError.map((host) => `${new URL(web.origin(host)).host} robots-unreachable`).sort(),
    );
    expect(summary.robotsFetched).toBeLessThanOrEqual(web.hostNames.length + web.roles.robotsError.length * most);
    // Sitemaps: every one the test web announces or serves was read, and its pages (some linked from nowhere else) fetched.
    expect(summary.totals['sitemap.parsed']).toBe(
      [...web.expected.sitemaps].filter((u) => web.requests.some((r) => r.status === 200 && `${web.origin(r.host)}${r.path}` === u)).length,
    );
    expect([...web.expected.reachable].filter((u) => u.includes('/orphan/') && web.requestCountByUrl().get(u) !== 1)).toEqual([]);
    expect(Object.keys(summary.totals).filter((k) => k.startsWith('failed.'))).toEqual([]);
  });

  it('fetches every reachable allowed page once, nothing disallowed, robots.txt first, politely', () => {
    expectPoliteCompleteCrawl(web, { delayMs: DELAY_S * 1000 });
  });

  it('stores exact duplicates once', async () => {
    const copies = web.expected.duplicates.reduce((n, g) => n + g.length - 1, 0);
    expect(summary.duplicates).toBe(copies);
    expect(summary.pagesStored).toBe(expectedStoredPages(web));
    expect((await storedPages(store())).size).toBe(summary.pagesStored);
  });

  it('keeps the windows-1251 page as fetched, with the charset it was decoded by', async () => {
    const { url, charset, text } = web.expected.charsetPage;
    const content = store();
    const { ref, meta } = (await storedPages(content)).get(url)!;
    expect(meta.charset).toBe(charset);
    const page = await new SegmentedPageStore(content).read(ref);
    expect(decode(page!.body, charset)).toContain(text);
  });

  it('writes a JSONL fetch log of every request', () => {
    const lines = readFetchLog(out);
    expect(lines.length).toBe(web.requests.length);
    const redirect = lines.find((l) => l.status === 301);
    expect(redirect).toMatchObject({ url: expect.any(String), location: expect.any(String), durationMs: expect.any(Number) });
    expect(lines.every((l) => typeof l.time === 'string' && 'contentType' in l && 'length' in l)).toBe(true);
  });
});

describe('embedded crawl archived as WARC (--warc)', () => {
  let web: TestWeb;
  let out: string;
  let summary: Record<string, any>;

  beforeAll(async () => {
    web = await TestWeb.start({ hosts: 30, seed: 3 });
    out = tempDir('crawl-warc-');
    summary = await crawlTestWeb(web, out, { args: [...web.seeds(), ...FOLLOW_EVERY_LINK, '--warc'], delaySeconds: 0, env: QUICK_ROBOTS_GIVE_UP_ENV });
  }, 150_000);

  afterAll(() => web?.close());

  it('writes a response for every stored page and a revisit for every byte-identical copy, readable by warcio and indexed in CDXJ', async () => {
    const store = new FsContentStore(join(out, 'content'));
    const keys = await collectKeys(store.list('warc/'));
    const warcs = keys.filter((k) => k.endsWith('.warc.gz'));
    expect(warcs.length).toBeGreaterThan(0);
    expect(keys.filter((k) => k.endsWith('.cdxj')).sort()).toEqual(warcs.map((k) => k.replace(/\.warc\.gz$/, '.cdxj')).sort());
    const types = new Map<string, number>();
    const responses = new Set<string>();
    let cdxLines = 0;
    for (const key of warcs) {
      const bytes = (await store.get(key))!.body;
      for await (const record of new WARCParser([bytes])) {
        types.set(record.warcType, (types.get(record.warcType) ?? 0) + 1);
        if (record.warcType === 'response') {
          responses.add(record.warcTargetURI!);
          const body = Buffer.from(await record.readFully());
          expect(body).toEqual(Buffer.from(web.replyBody(record.warcTargetURI!)));
        }
      }
      cdxLines += (await store.get(key.replace(/\.warc\.gz$/, '.cdxj')))!.body.toString().trim().split('\n').length;
    }
    expect(types.get('warcinfo')).toBe(warcs.length);
    // A copy checked while its original's record is still being written is archived in full (a response).
    expect(types.get('response')).toBeGreaterThanOrEqual(summary.pagesStored);
    expect(types.get('response')! + types.get('revisit')!).toBe(summary.pagesStored + summary.duplicates);
    expect(types.get('revisit')).toBeGreaterThan(0);
    expect(responses.size).toBe(types.get('response')); // no URL archived twice
    expect(types.get('request')).toBe(summary.pagesStored + summary.duplicates);
    expect(cdxLines).toBe(summary.pagesStored + summary.duplicates);
    expect(summary.duplicates).toBeGreaterThan(0);
  });
});

describe('embedded crawl of loopback names', () => {
  const crawl = async (web: TestWeb, env: Record<string, string>, flags: string[] = []) => {
    const out = tempDir('crawl-private-');
    const [seed] = web.seeds();
    // A crawl that fetched nothing exits 3 (and says why): its summary is still on stdout.
    const { stdout, code } = await runCrawlCli(
      [seed, '--resolve', `${new URL(seed).hostname}=127.0.0.1`, '--delay', '0', '--max-depth', '0', '--sitemaps', 'off', '--out', out, '--json', ...flags],
      { env: { ...process.env, ...IN_MEMORY_TEST_ENV, ...QUICK_ROBOTS_GIVE_UP_ENV, ...env }, timeoutMs: 60_000 },
    );
    return { ...JSON.parse(stdout), exitCode: code };
  };

  it('refuses a name that resolves to 127.0.0.1: no request reaches it', async () => {
    const web = await TestWeb.start({ hosts: 12 });
    try {
      expect(await crawl(web, {})).toMatchObject({
        stopped: 'finished',
        complete: false,
        pagesFetched: 0,
        errors: 1,
        exitCode: 3,
        notFetched: [expect.objectContaining({ reason: 'address-refused', hosts: 1 })],
      });
      expect(web.requests).toHaveLength(0);
    } finally {
      await web.close();
    }
  }, 60_000);

  it('fetches it when 127.0.0.0/8 is on the CIDR allowlist (and only then)', async () => {
    const web = await TestWeb.start({ hosts: 12 });
    try {
      expect(await crawl(web, { DNS_ALLOW_CIDRS: '10.0.0.0/8' })).toMatchObject({ pagesFetched: 0, errors: 1, exitCode: 3 });
      expect(await crawl(web, { DNS_ALLOW_CIDRS: '127.0.0.0/8' })).toMatchObject({ complete: true, pagesFetched: 1, errors: 0, exitCode: 0, notFetched: [] });
      expect(web.requests.map((r) => r.path)).toEqual(['/robots.txt', '/']);
    } finally {
      await web.close();
    }
  }, 60_000);
});
