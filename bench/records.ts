/**
 * The PostgreSQL records at size, on this machine: rows/s written, claims/s, lookups/s and validators/s with
 * BENCH_RECORDS_ROWS pages recorded (default 10,000,000), and bytes per page on disk.
 *
 * 1. Load: BENCH_RECORDS_ROWS pages of realistic rows (URLs of 55–88 characters, 74 on average, on 100,000
 *    hosts, hex SHA-256 content hashes, a content key, a simhash, an ETag and a Last-Modified), each
 *    claimed (claimContent) then recorded (recordPages), in batches of BENCH_RECORDS_BATCH (default 500, RECORDS_BATCH_MAX's default:
 *    the batches content-seen's jobs coalesce into), BENCH_RECORDS_IN_FLIGHT batches at once (default 4).
 *    The rate is printed every tenth of the load, so a slowdown as the tables grow shows.
 * 2. At that size, BENCH_RECORDS_OPS (default 50,000) of each, through BatchingRecordsStore (5 ms linger,
 *    batches of 500) with BENCH_RECORDS_CALLERS (default 256) callers of one item each, as content-seen's
 *    and the control plane's jobs call it:
 *    - writes: new pages recorded (claim, then record);
 *    - claims: half new content hashes, half hashes already owned (exact duplicates), each answer checked;
 *    - lookups: random URLs, half recorded (each must be found, with its content key) and half not (null);
 *    - validators: the same mix.
 * 3. Bytes per page on disk: pg_total_relation_size (heap, TOAST, indexes) of every records table's
 *    partitions, after VACUUM ANALYZE, ÷ pages recorded.
 *
 * It runs in a database of its own, `bench_records_<random>`, created on the server of POSTGRES_URL (default
 * postgres://postgres@127.0.0.1:5432/test) and dropped at the end (BENCH_RECORDS_KEEP=1 keeps it).
 * The last line of output is `BENCH_RESULT {json}`.
 *
 * Usage: npm run -s bench:records  (BENCH_RECORDS_ROWS=1000000 for a shorter run)
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { Client } from 'pg';
import { BatchingRecordsStore, FetchedPage, PostgresRecordsStore } from '@crawler/records';
import { printBenchResult } from './report/bench-result';

const ADMIN_URL = process.env.POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.BENCH_RECORDS_ROWS || 10_000_000);
const BATCH = Number(process.env.BENCH_RECORDS_BATCH || 500);
const IN_FLIGHT = Number(process.env.BENCH_RECORDS_IN_FLIGHT || 4);
const OPS = Number(process.env.BENCH_RECORDS_OPS || 50_000);
const CALLERS = Number(process.env.BENCH_RECORDS_CALLERS || 256);
const KEEP = process.env.BENCH_RECORDS_KEEP === '1';
const HOSTS = 100_000;
/** Pages recorded by step 2's writes have indices from here: never confused with the load's. */
const WRITES_FROM = 2_000_000_000;
/** URLs never recorded (lookup misses). */
const MISSES_FROM = 3_000_000_000;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Page i, the same in every run: its URL, hashes and validators follow from i alone, so nothing is kept to look it up. */
function pageAt(i: number): FetchedPage {
  const hash = createHash('sha256').update(`page ${i}`).digest('hex');
  const host = i % HOSTS;
  const fetchedAt = new Date(Date.UTC(2026, 10, 1) + (i % 2_592_000) * 1000);
  return {
    url: `https://www.site-${host}.example.com/${['news', 'shop/item', 'blog/2026', 'docs/guide'][i % 4]}/${hash.slice(0, 6 + (i % 24))}-${i}.html`,
    fetchedAt: fetchedAt.toISOString(),
    status: 200,
    contentKey: `pages/seg-${Math.floor(i / 1000).toString(36)}.warc.gz#${(i % 1000) * 30_000}`,
    contentHash: hash,
    simhash: hash.slice(16, 32),
    etag: `"${hash.slice(32, 48)}"`,
    lastModified: new Date(fetchedAt.getTime() - 86_400_000).toUTCString(),
  };
}

/** A deterministic PRNG (mulberry32): every run asks the same URLs. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

async function admin(sql: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Runs `work(0…count-1)` with `inFlight` at once; answers the seconds it took. */
async function timed(count: number, inFlight: number, work: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function load(store: PostgresRecordsStore): Promise<number> {
  const batches = Math.ceil(ROWS / BATCH);
  const tenth = Math.max(1, Math.round(batches / 10));
  let lastAt = process.hrtime.bigint();
  return timed(batches, IN_FLIGHT, async (b) => {
    const pages = Array.from({ length: Math.min(BATCH, ROWS - b * BATCH) }, (_, k) => pageAt(b * BATCH + k));
    await store.claimContent(pages.map((p) => ({ contentHash: p.contentHash, url: p.url })));
    await store.recordPages(pages);
    if ((b + 1) % tenth === 0) {
      const now = process.hrtime.bigint();
      process.stderr.write(`  loaded ${fmt((b + 1) * BATCH)} pages: ${fmt((tenth * BATCH) / (Number(now - lastAt) / 1e9))} pages/s over the last tenth\n`);
      lastAt = now;
    }
  });
}

/** The schema the records go in, as a crawl's go in the one its CRAWLER_PREFIX names. */
const SCHEMA = 'crawler';

/** Each records table's partitions, heap and indexes (pg_total_relation_size counts a table's indexes). */
async function diskBytes(url: string): Promise<{ table: string; bytes: number }[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
    const { rows } = await client.query<{ table: string; bytes: string }>(
      `SELECT parent.relname AS table, sum(pg_total_relation_size(child.oid))::bigint AS bytes
       FROM pg_inherits JOIN pg_class parent ON parent.oid = inhparent JOIN pg_class child ON child.oid = inhrelid
       WHERE parent.relnamespace = '${SCHEMA}'::regnamespace AND parent.relkind = 'p' GROUP BY parent.relname ORDER BY 2 DESC`,
    );
    return rows.map((r) => ({ table: r.table, bytes: Number(r.bytes) }));
  } finally {
    await client.end();
  }
}

async function main() {
  const name = `bench_records_${randomBytes(4).toString('hex')}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await admin(`CREATE DATABASE "${name}"`);
  const dropped = () => (KEEP ? Promise.resolve() : admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  process.on('SIGINT', () => void dropped().finally(() => process.exit(130)));
  try {
    const store = await PostgresRecordsStore.open({ url: url.href, schema: SCHEMA, poolSize: Math.max(IN_FLIGHT, 4) });
    const batching = new BatchingRecordsStore(store, { lingerMs: 5, maxItems: 500 });
    try {
      process.stderr.write(`Database ${name}: loading ${fmt(ROWS)} pages in batches of ${fmt(BATCH)}, ${IN_FLIGHT} in flight\n`);
      const loadSeconds = await load(store);
      const random = prng(20261126);
      const hit = () => Math.floor(random() * ROWS);

      const writeSeconds = await timed(OPS, CALLERS, async (i) => {
        const page = pageAt(WRITES_FROM + i);
        await batching.claimContent([{ contentHash: page.contentHash, url: page.url }]);
        await batching.recordPages([page]);
      });

      const claimSeconds = await timed(OPS, CALLERS, async (i) => {
        // Odd: a copy of a recorded page's content under a new URL (its owner answered); even: new content.
        const owned = i % 2 === 1 ? pageAt(hit()) : null;
        const claim = owned ? { contentHash: owned.contentHash, url: `${owned.url}?copy` } : { contentHash: `new-${i}`, url: `https://claims.example.com/${i}` };
        const [owner] = await batching.claimContent([claim]);
        if (owner !== (owned ? owned.url : claim.url)) throw new Error(`claim of ${claim.contentHash} answered ${owner}`);
      });

      const lookupSeconds = await timed(OPS, CALLERS, async (i) => {
        const page = pageAt(i % 2 === 0 ? hit() : MISSES_FROM + i);
        const [found] = await batching.lookup([page.url]);
        if ((found.page?.contentKey ?? null) !== (i % 2 === 0 ? page.contentKey : null)) throw new Error(`lookup of ${page.url} answered ${JSON.stringify(found)}`);
      });

      const validatorSeconds = await timed(OPS, CALLERS, async (i) => {
        const page = pageAt(i % 2 === 0 ? hit() : MISSES_FROM + i);
        const [found] = await batching.validators([page.url]);
        if ((found?.etag ?? null) !== (i % 2 === 0 ? page.etag : null)) throw new Error(`validators of ${page.url} answered ${JSON.stringify(found)}`);
      });

      const pages = ROWS + OPS;
      const tables = await diskBytes(url.href);
      const total = tables.reduce((sum, t) => sum + t.bytes, 0);

      console.log(`\n## Records in PostgreSQL: ${fmt(ROWS)} pages\n`);
      console.log(
        `Machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}, load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
      console.log(
        `Load: batches of ${fmt(BATCH)}, ${IN_FLIGHT} in flight; then ${fmt(OPS)} of each operation by ${CALLERS} callers of one item, batched (5 ms linger, ≤ 500)\n`,
      );
      console.log('| figure | value |');
      console.log('|---|---|');
      console.log(`| load ${fmt(ROWS)} pages (claim + record each) | ${fmt(loadSeconds / 60, 1)} min, **${fmt(ROWS / loadSeconds)} pages/s** |`);
      console.log(`| rows/s written at ${fmt(ROWS)} (new pages: claim + record) | **${fmt(OPS / writeSeconds)} pages/s** |`);
      console.log(`| claims/s (half new content, half exact duplicates) | **${fmt(OPS / claimSeconds)} claims/s** |`);
      console.log(`| lookups/s (random URLs, half hits, half misses) | **${fmt(OPS / lookupSeconds)} lookups/s** |`);
      console.log(`| validators/s (the same mix) | **${fmt(OPS / validatorSeconds)} reads/s** |`);
      console.log(`| bytes per page on disk (all records tables ÷ ${fmt(pages)} pages) | **${fmt(total / pages)} B** (${fmt(total / 2 ** 30, 2)} GiB) |`);
      for (const t of tables) console.log(`| … of which ${t.table} | ${fmt(t.bytes / pages)} B (${fmt(t.bytes / 2 ** 30, 2)} GiB) |`);
      printBenchResult('records', [
        { id: 'load', label: `Records load, pages/s (claim + record, batches of ${BATCH})`, value: ROWS / loadSeconds, unit: 'pages/s' },
        { id: 'writes', label: `Records writes at ${fmt(ROWS)} rows, pages/s`, value: OPS / writeSeconds, unit: 'pages/s' },
        { id: 'claims', label: `Records claims/s at ${fmt(ROWS)} rows`, value: OPS / claimSeconds, unit: 'claims/s' },
        { id: 'lookups', label: `Records lookups/s at ${fmt(ROWS)} rows`, value: OPS / lookupSeconds, unit: 'lookups/s' },
        { id: 'validators', label: `Records validators/s at ${fmt(ROWS)} rows`, value: OPS / validatorSeconds, unit: 'reads/s' },
        { id: 'bytes', label: 'Records bytes per page on disk', value: total / pages, unit: 'B' },
      ]);
    } finally {
      await batching.close();
    }
  } finally {
    await dropped();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
