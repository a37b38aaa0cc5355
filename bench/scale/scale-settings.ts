import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShapeName } from './scale-sample';

/** What `npm run bench:scale` runs, from its environment (see bench/scale.ts for each variable). */
export interface ScaleSettings {
  /** Reachable pages of the web: hosts × pagesPerHost (SCALE_PAGES rounded up to whole hosts). */
  pages: number;
  hosts: number;
  pagesPerHost: number;
  shapes: ShapeName[];
  sampleMs: number;
  /** Share of the pages at which every crawler process is killed (SIGKILL) and started again; none when undefined. */
  killAt?: number;
  /** Per-host politeness delay given to the crawler (FRONTIER_MIN_DELAY_MS, --delay), ms. */
  delayMs: number;
  latencyMs: number;
  pageKb: number;
  sharedPerMille: number;
  sharedAddresses: number;
  crawlDelayHosts: number;
  seed: number;
  /** Per shape. */
  timeoutMs: number;
  /** URLs URL-seen's Bloom filter is sized for, per reachable page (the crawl meets its duplicates, redirects, missing and private URLs too). */
  bloomUrlsPerPage: number;
  /** Extra environment for every crawler process (SCALE_ENV). */
  env: Record<string, string>;
  redisUrl: string;
  redisClusterUrl: string;
  out: string;
}

export function scaleSettings(env: NodeJS.ProcessEnv = process.env): ScaleSettings {
  const number = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0 (got ${JSON.stringify(raw)})`);
    return n;
  };
  const pages = number('SCALE_PAGES', 1_000_000);
  const hosts = Math.max(1, Math.min(number('SCALE_HOSTS', 10_000), Math.floor(pages / 2)));
  const pagesPerHost = Math.max(2, Math.ceil(pages / hosts));
  const shapes = (env.SCALE_SHAPES || 'embedded,distributed').split(',').map((s) => s.trim());
  for (const shape of shapes)
    if (shape !== 'embedded' && shape !== 'distributed') throw new Error(`SCALE_SHAPES: unknown shape ${JSON.stringify(shape)} (embedded, distributed)`);
  const killAt = env.SCALE_KILL_AT ? number('SCALE_KILL_AT', 0) : undefined;
  if (killAt !== undefined && !(killAt > 0 && killAt < 1)) throw new Error(`SCALE_KILL_AT must be a share between 0 and 1 (got ${env.SCALE_KILL_AT})`);
  return {
    pages: hosts * pagesPerHost,
    hosts,
    pagesPerHost,
    shapes: shapes as ShapeName[],
    sampleMs: number('SCALE_SAMPLE_MS', 60_000),
    killAt,
    delayMs: number('SCALE_DELAY_MS', 1000),
    latencyMs: number('SCALE_LATENCY_MS', 10),
    pageKb: number('SCALE_PAGE_KB', 30),
    sharedPerMille: Math.round(number('SCALE_SHARED_SHARE', 0.8) * 1000),
    sharedAddresses: Math.max(1, number('SCALE_SHARED_ADDRESSES', 4)),
    crawlDelayHosts: number('SCALE_CRAWL_DELAY_HOSTS', 10),
    seed: number('SCALE_SEED', 1),
    timeoutMs: number('SCALE_TIMEOUT_S', 24 * 3600) * 1000,
    bloomUrlsPerPage: number('SCALE_BLOOM_URLS_PER_PAGE', 5),
    env: parseEnvPairs(env.SCALE_ENV ?? ''),
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    redisClusterUrl: env.REDIS_CLUSTER_URL || 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002',
    out: env.SCALE_OUT || join(__dirname, '../../../bench/results'),
  };
}

/** `A=1,B=2` (or space-separated) → { A: '1', B: '2' }. */
function parseEnvPairs(text: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of text.split(/[,\s]+/).filter(Boolean)) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(`SCALE_ENV: expected NAME=value pairs, got ${JSON.stringify(item)}`);
    pairs[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return pairs;
}

/** The environment every crawler process of the run gets, whatever its shape. */
export function crawlerEnv(settings: Pick<ScaleSettings, 'bloomUrlsPerPage' | 'pages' | 'env'>): Record<string, string> {
  return {
    URL_FILTER_MAX_DEPTH: '1000000',
    // The bench's test clusters turn the per-IP interval off (their hosts share one address); a scale run keeps
    // the crawler's default rule unless SCALE_ENV says otherwise: the web's shared addresses are what it is for.
    FRONTIER_PER_IP_INTERVAL_MS: '',
    // Sized for the run, as the soak does: room for every URL URL-seen is asked about, at a rate that makes a
    // false positive (a URL taken for seen, so never fetched: lost) unlikely over the whole run.
    URL_SEEN_EXPECTED_URLS: String(Math.ceil(settings.bloomUrlsPerPage * settings.pages)),
    URL_SEEN_FALSE_POSITIVE_RATE: '1e-6',
    ...settings.env,
  };
}

/** Leases the crawler handed out again by design, from its totals (see ShapeRun.reclaimed). */
export function reclaimedOf(totals: Record<string, number>): number {
  return (totals['frontier.leases-expired'] ?? 0) + (totals['frontier.ring-reclaimed'] ?? 0);
}

/** Where a shape's samples are appended as they are taken (`<out>/scale-<shape>.samples.jsonl`, started afresh). */
export function journalFile(settings: Pick<ScaleSettings, 'out'>, shape: ShapeName): string {
  mkdirSync(settings.out, { recursive: true });
  const file = join(settings.out, `scale-${shape}.samples.jsonl`);
  writeFileSync(file, '');
  return file;
}
