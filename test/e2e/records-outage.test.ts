import { Client } from 'pg';
import { report } from '../support/crawl-faults';
import { clearPrefix, REDIS_URL } from '../support/redis-prefix';
import { startService, stopService } from '../support/service-processes';
import { crawlThroughOutage, expectRecovered, row } from '../support/outage-crawl';
import { postgresBinaries, PrivatePostgres } from '../support/private-postgres';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

/**
 * PostgreSQL, where the records live (RECORDS_URL), stops for 30 s under a running distributed crawl (every
 * service its own process) and comes back on the same port and directory. While it is down every service
 * stays up, content-seen (which writes the records) answers 503 on /health/ready naming `postgresql`, the
 * control plane stays ready (degraded), the status names it as what the crawl waits
 * on, and the messages that needed it (content-seen's) are retried with backoff as an outage, not spent as
 * failures. Once it is back the crawl completes by itself: every page fetched, stored and recorded once.
 *
 * It runs on a server of its own (initdb into a temp directory, pg_ctl on a free port): the
 * suite's shared PostgreSQL is never stopped. With CRASH_REPORT=1 it prints one JSON line of its figures.
 */

const OUTAGE_MS = 30_000;
const bin = postgresBinaries();
if (!bin) process.stderr.write('records-outage.test.ts skipped: no PostgreSQL server programs (initdb, pg_ctl) under /usr/lib/postgresql/*/bin or PG_BIN\n');

const rows: unknown[] = [];
afterAll(() => {
  report('records-outage', rows);
  removeTempDirs();
});

(bin ? describe : describe.skip)('PostgreSQL stopped', () => {
  let postgres: PrivatePostgres;
  beforeAll(async () => {
    postgres = new PrivatePostgres(bin!);
    await postgres.init();
  }, 120_000);
  afterAll(() => postgres?.close());

  it('before a service starts: the service waits for it (RECORDS_STARTUP_WAIT_MS) and starts once it is back', async () => {
    await postgres.stop('fast');
    const prefix = `t18r-wait-${process.pid}`;
    const env = { REDIS_URL, CRAWLER_PREFIX: prefix, CRAWLER_DATA_DIR: tempDir('records-wait-'), RECORDS_URL: postgres.url, RECORDS_STARTUP_WAIT_MS: '60000' };
    const starting = startService('content-seen', env);
    const exited = starting.then(
      () => false,
      () => true,
    );
    await new Promise((r) => setTimeout(r, 3000));
    const restartedAt = Date.now();
    await postgres.start();
    const service = await starting;
    try {
      expect(await exited).toBe(false);
      expect(Date.now() - restartedAt).toBeLessThan(30_000);
      expect(service.output.join('')).not.toMatch(/refusing to start/);
    } finally {
      await stopService(service);
      await clearPrefix(prefix, REDIS_URL);
    }
  }, 120_000);

  it('for 30 s mid-crawl: waited out, content-seen unready naming it, the control plane degraded, messages retried, the crawl completes with every page recorded once', async () => {
    const env = {
      RECORDS_URL: postgres.url,
      RECORDS_POOL_SIZE: '2',
      // The outage retries' longest wait (production: 30 s), so the crawl ends soon after the server is back.
      QUEUE_INFRA_BACKOFF_MAX_MS: '4000',
    };
    const outcome = await crawlThroughOutage(
      24,
      { env },
      'postgresql',
      () => postgres.stop('fast'),
      () => postgres.start(),
      OUTAGE_MS,
    );
    // The crawl's records are in the schema its CRAWLER_PREFIX names.
    const client = new Client({ connectionString: postgres.url, options: `-c search_path="${outcome.prefix}"` });
    await client.connect();
    const pages = (await client.query<{ url: string; changes: number }>('SELECT url, changes FROM pages')).rows;
    const duplicates = (await client.query<{ url: string }>('SELECT url FROM duplicates')).rows.map((r) => r.url);
    await client.end();
    rows.push({ ...row('postgresql-30s', outcome), pageRows: pages.length, duplicateRows: duplicates.length });

    expectRecovered(outcome, 'postgresql');
    // While it was down the status said what the crawl waited on; it never called itself complete.
    expect(outcome.statusWhileDown?.waitingOn).toMatch(/postgresql unavailable since |\d+ messages? of [\w.-]+ retrying after PostgreSQL errors since /);
    expect(outcome.statusesWhileDown.some((s) => s.status?.outages?.some((o: any) => o.dependency === 'postgresql'))).toBe(true);
    expect(outcome.statusWhileDown?.complete).toBe(false);
    // Waited out, not failed: the crawl completed by itself, nothing for an operator to replay.
    expect(outcome.status.complete).toBe(true);
    expect(Object.values(outcome.replayed).reduce((a, b) => a + b, 0)).toBe(0);
    expect(outcome.status.totals['outage-retry.content-seen']).toBeGreaterThan(0);
    // The pages table holds exactly the stored pages, none with a change of content (a page recorded again
    // from another fetch would count one), and no stored page is also recorded as a duplicate.
    expect(pages.map((p) => p.url).sort()).toEqual([...outcome.storedUrls].sort());
    expect(pages.filter((p) => p.changes !== 0)).toEqual([]);
    const stored = new Set(outcome.storedUrls);
    expect(duplicates.filter((url) => stored.has(url))).toEqual([]);
  }, 360_000);
});
