/**
 * Reads the `.cpuprofile` files of a profiled run and prints where the CPU went, per file (a process or one
 * of its worker threads) and over all of them, by owner (bench/profile/summarize.ts).
 *
 * Usage:
 *   BENCH_CPU_PROF_DIR=/tmp/prof BENCH_RUNS=ours-embedded npm run bench   # writes the profiles
 *   npm run -s bench:profile -- /tmp/prof 20000                          # dir, and pages crawled (optional)
 * Profiling slows a run by about a quarter; compare shares between runs, not the absolute ms.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type CpuProfile, ownerTable, selfTimeByOwner } from './profile/summarize';

function main(): void {
  const [dir, pagesArg] = process.argv.slice(2);
  if (!dir) throw new Error('usage: bench:profile -- <dir of .cpuprofile files> [pages crawled]');
  const pages = pagesArg ? Number(pagesArg) : undefined;
  if (pages !== undefined && !(pages > 0)) throw new Error(`pages must be a positive number, got ${pagesArg}`);
  if (!existsSync(dir)) throw new Error(`no directory ${dir}: write the profiles there first (BENCH_CPU_PROF_DIR=${dir} BENCH_RUNS=ours-embedded npm run bench)`);
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort();
  if (files.length === 0) throw new Error(`no .cpuprofile files in ${dir}`);
  const all = new Map<string, number>();
  for (const file of files) {
    const ms = selfTimeByOwner(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile);
    for (const [owner, v] of ms) all.set(owner, (all.get(owner) ?? 0) + v);
    console.log(`\n### ${file}\n\n${ownerTable(ms, pages, 0.02)}`);
  }
  console.log(`\n### all ${files.length} profiles\n\n${ownerTable(all, pages)}`);
}

main();
