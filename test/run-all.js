#!/usr/bin/env node
/**
 * `npm test`: every test file, in lanes that run at the same time, then one summary.
 *
 * One file at a time left a core idle: most end-to-end files spend their time waiting (politeness delays,
 * processes starting, a crawl draining), and the unit files wait on nothing. So the files go in lanes
 * (test/suites.js says which file goes in which): each lane is one jest run, its files one after another
 * (`--runInBand`), and the lanes run side by side. No lane holds two process-heavy files at once, so no two
 * of them compete for the cores past their readiness probes' limits.
 *
 * Each lane's output is printed as it comes, every line prefixed with the lane's name; the lanes' counts are
 * added up at the end into jest's own summary lines, so whatever reads jest's summary reads this one too.
 * `npm test -- <jest arguments>` runs plain jest with those arguments instead (one file, a pattern, a flag).
 */
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const { LONG_LANE } = require('./suites');

const ROOT = join(__dirname, '..');
const JEST = require.resolve('jest/bin/jest');
const pathPattern = (file) => `/${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
/** The lanes: jest's arguments for each (the base config's ignore patterns kept in the second). */
const LANES = [
  { name: 'long e2e', args: LONG_LANE.map(pathPattern) },
  { name: 'the rest', args: ['--testPathIgnorePatterns', ...require('../jest.config').testPathIgnorePatterns, ...LONG_LANE.map(pathPattern)] },
];

/**
 * How long a lane's jest may take to exit after printing its summary. Jest waits for everything the tests
 * left open; the global teardown has named it by then (test/support/report-open-handles.ts), and a lane
 * still running after this is stopped and counted as failed, so that a leak fails the run instead of hanging it.
 */
const EXIT_GRACE_MS = 60_000;

/** Runs jest; with a prefix, prints its lines prefixed and answers them too (its summary is read from them). */
function runJest(args, prefix) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [JEST, ...args], { cwd: ROOT, stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const lines = [];
    let hung = false;
    let watchdog;
    const onSummary = () => {
      watchdog ??= setTimeout(() => {
        hung = true;
        process.stdout.write(
          `${prefix}jest did not exit ${EXIT_GRACE_MS / 1000} s after its last test: a test left something open (see "Still open" above). Stopping it.\n`,
        );
        child.kill('SIGKILL');
      }, EXIT_GRACE_MS).unref();
    };
    if (prefix) for (const stream of [child.stdout, child.stderr]) prefixLines(stream, prefix, lines, onSummary);
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ code: hung ? 1 : (code ?? (signal ? 1 : 0)), lines });
    });
  });
}

function prefixLines(stream, prefix, seen, onSummary) {
  let rest = '';
  const print = (lines) => {
    seen.push(...lines);
    if (lines.some((line) => line.startsWith('Ran all test suites'))) onSummary();
    process.stdout.write(lines.map((line) => `${prefix}${line}\n`).join(''));
  };
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    print(lines);
  });
  stream.on('end', () => rest && print([rest]));
}

/**
 * A lane's counts, from jest's own summary lines ("Tests: 1 failed, 29 skipped, 3277 passed, 3306 total"),
 * printed before it exits: a lane stopped for not exiting still has them.
 */
function countsOf(lines) {
  const last = (label) => lines.filter((line) => line.startsWith(label)).pop();
  const parse = (line) => Object.fromEntries([...(line ?? '').matchAll(/(\d+) (failed|skipped|todo|passed|total)/g)].map((m) => [m[2], Number(m[1])]));
  return { suites: parse(last('Test Suites:')), tests: parse(last('Tests:')), found: last('Tests:') !== undefined };
}

/** Jest's own summary lines, over every lane: "Tests: 2 failed, 3334 passed, 3336 total". */
function summary(counts) {
  const sum = (kind, key) => counts.reduce((n, c) => n + (c[kind][key] ?? 0), 0);
  const line = (label, kind) =>
    `${label} ${[
      sum(kind, 'failed') && `${sum(kind, 'failed')} failed`,
      sum(kind, 'skipped') && `${sum(kind, 'skipped')} skipped`,
      sum(kind, 'todo') && `${sum(kind, 'todo')} todo`,
      `${sum(kind, 'passed')} passed`,
      `${sum(kind, 'total')} total`,
    ]
      .filter(Boolean)
      .join(', ')}`;
  return `${line('Test Suites:', 'suites')}\n${line('Tests:      ', 'tests')}`;
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length > 0) process.exit((await runJest(args)).code);

  const started = Date.now();
  const width = Math.max(...LANES.map((lane) => lane.name.length));
  const lanes = await Promise.all(
    LANES.map(async (lane) => {
      const { code, lines } = await runJest([...lane.args, '--runInBand'], `${lane.name.padEnd(width)} │ `);
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      process.stdout.write(`${lane.name.padEnd(width)} │ lane ended after ${seconds} s with exit code ${code}\n`);
      const counts = countsOf(lines);
      // A lane that crashed before jest's summary: nothing of it can be counted as passed.
      return { code: code || (counts.found ? 0 : 1), counts };
    }),
  );
  const failed = lanes.some((lane) => lane.code !== 0);
  process.stdout.write(`\n${summary(lanes.map((lane) => lane.counts))}\nTime:        ${((Date.now() - started) / 1000).toFixed(0)} s, ${LANES.length} lanes\n`);
  if (lanes.some((lane) => !lane.counts.found)) process.stdout.write('A lane ended without a summary (see its lines above): counted as failed.\n');
  process.exit(failed ? 1 : 0);
}

main();
