/**
 * The codecs of stored pages, on this machine: CPU per page and bytes stored per page, compressing the pages
 * of the benchmark web (bench/web, `real` shape by default: the pages a crawl of `npm run bench` stores) one by
 * one as the compression threads do (`compressSync`, one page per call, on one thread), and reading them back.
 *
 * Each codec and level compresses every page BENCH_CODECS_ROUNDS times (5); the best round is kept, as the
 * least disturbed by whatever else the machine runs. zstd is measured where Node.js has it built in (22.15 and
 * later); on an older one its rows say so.
 * The last line of output is `BENCH_RESULT {json}`: CPU µs and stored bytes per page, each codec and level.
 *
 * Usage: npm run -s bench:codecs  (BENCH_CODECS_HOSTS, default 20, × BENCH_CODECS_PAGES_PER_HOST, default
 * 100: the pages compressed; BENCH_WEB=simple for the first benchmark web's uniform pages; BENCH_QUICK=1 for a
 * smoke run: 1 round)
 */
import os from 'node:os';
import { type Compression, compressSync, decompressSync, ZSTD_NODE_VERSION, zstdBuiltIn } from '@crawler/content-store';
import { type BenchFigure, printBenchResult } from './report/bench-result';
import { BENCH_WEB_SHAPES, BenchWeb, type BenchWebShape } from './web/bench-web';

const QUICK = process.env.BENCH_QUICK === '1';
const HOSTS = Number(process.env.BENCH_CODECS_HOSTS || 20);
const PAGES_PER_HOST = Number(process.env.BENCH_CODECS_PAGES_PER_HOST || 100);
const ROUNDS = Number(process.env.BENCH_CODECS_ROUNDS || (QUICK ? 1 : 5));
const SHAPE = (process.env.BENCH_WEB || 'real') as BenchWebShape;

/** gzip 3 and zstd 3 are the defaults (CONTENT_GZIP_LEVEL, CONTENT_ZSTD_LEVEL); the others frame them. */
const RUNS: Compression[] = [
  { codec: 'gzip', level: 1 },
  { codec: 'gzip', level: 3 },
  { codec: 'gzip', level: 6 },
  { codec: 'zstd', level: 1 },
  { codec: 'zstd', level: 3 },
  { codec: 'zstd', level: 6 },
];

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** CPU µs (user + system) of `work`, the process's own: the bench runs nothing else meanwhile. */
function cpuMicros(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

function pagesOf(web: BenchWeb): Buffer[] {
  const pages: Buffer[] = [];
  for (const host of web.hosts) {
    for (let p = 0; p < web.pagesPerHost; p++) pages.push(web.reply(host.name, p === 0 ? '/' : `/p/${p}`)!.body);
  }
  return pages;
}

function main() {
  if (!(BENCH_WEB_SHAPES as readonly string[]).includes(SHAPE)) throw new Error(`BENCH_WEB must be one of ${BENCH_WEB_SHAPES.join(', ')}, not ${SHAPE}`);
  const pages = pagesOf(new BenchWeb({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, port: 8080, seed: 1, shape: SHAPE }));
  const raw = pages.reduce((n, page) => n + page.length, 0);
  console.log(`# Stored-page codecs: ${fmt(pages.length)} pages of the ${SHAPE} benchmark web, ${fmt(raw / pages.length / 1024, 1)} KB mean`);
  console.log(`Node.js ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, best of ${ROUNDS} rounds\n`);
  console.log('| codec | level | CPU µs a page, compressing | CPU µs a page, reading | stored bytes a page | ratio |');
  console.log('|---|---|---|---|---|---|');
  const figures: BenchFigure[] = [];
  for (const run of RUNS) {
    if (run.codec === 'zstd' && !zstdBuiltIn()) {
      console.log(`| zstd | ${run.level} | not built into Node.js ${process.version} (needs ${ZSTD_NODE_VERSION}) | | | |`);
      continue;
    }
    let stored: Buffer[] = [];
    let compressing = Number.POSITIVE_INFINITY;
    let reading = Number.POSITIVE_INFINITY;
    for (let round = 0; round < ROUNDS; round++) {
      compressing = Math.min(
        compressing,
        cpuMicros(() => (stored = pages.map((page) => compressSync(page, run)))),
      );
      reading = Math.min(
        reading,
        cpuMicros(() => {
          for (const bytes of stored) decompressSync(bytes, run.codec);
        }),
      );
    }
    stored.forEach((bytes, i) => {
      if (!decompressSync(bytes, run.codec).equals(pages[i])) throw new Error(`${run.codec} ${run.level}: page ${i} did not read back`);
    });
    const bytes = stored.reduce((n, page) => n + page.length, 0);
    const perPage = { compress: compressing / pages.length, read: reading / pages.length, bytes: bytes / pages.length };
    console.log(`| ${run.codec} | ${run.level} | ${fmt(perPage.compress)} | ${fmt(perPage.read)} | ${fmt(perPage.bytes)} | ${fmt(raw / bytes, 2)} |`);
    const id = `${run.codec}-${run.level}`;
    figures.push(
      { id: `${id}-cpu-us`, label: `${run.codec} ${run.level}: CPU µs a page, compressing`, value: perPage.compress, unit: 'µs' },
      { id: `${id}-bytes`, label: `${run.codec} ${run.level}: stored bytes a page`, value: perPage.bytes, unit: 'B' },
    );
  }
  printBenchResult('codecs', figures);
}

main();
