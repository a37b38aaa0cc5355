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
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
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

function runJest(args, prefix) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [JEST, ...args], { cwd: ROOT, stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (prefix) for (const stream of [child.stdout, child.stderr]) prefixLines(stream, prefix);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

function prefixLines(stream, prefix) {
  let rest = '';
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    process.stdout.write(lines.map((line) => `${prefix}${line}\n`).join(''));
  });
  stream.on('end', () => rest && process.stdout.write(`${prefix}${rest}\n`));
}

/** Jest's own summary lines, over every lane: "Tests: 2 failed, 3334 passed, 3336 total". */
function summary(results) {
  const line = (label, failed, passed, skipped, total) =>
    `${label} ${[failed && `${failed} failed`, skipped && `${skipped} skipped`, `${passed} passed`, `${total} total`].filter(Boolean).join(', ')}`;
  const sum = (key) => results.reduce((n, r) => n + (r?.[key] ?? 0), 0);
  return [
    line(
      'Test Suites:',
      sum('numFailedTestSuites') + sum('numRuntimeErrorTestSuites'),
      sum('numPassedTestSuites'),
      sum('numPendingTestSuites'),
      sum('numTotalTestSuites'),
    ),
    line('Tests:      ', sum('numFailedTests'), sum('numPassedTests'), sum('numPendingTests') + sum('numTodoTests'), sum('numTotalTests')),
  ].join('\n');
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length > 0) process.exit(await runJest(args));

  const dir = mkdtempSync(join(tmpdir(), 'crawler-tests-'));
  const started = Date.now();
  const width = Math.max(...LANES.map((lane) => lane.name.length));
  const lanes = await Promise.all(
    LANES.map(async (lane) => {
      const output = join(dir, `${lane.name}.json`);
      const code = await runJest([...lane.args, '--runInBand', '--json', '--outputFile', output], `${lane.name.padEnd(width)} │ `);
      let result;
      try {
        result = JSON.parse(readFileSync(output, 'utf8'));
      } catch {
        // A lane that crashed before jest wrote its results: nothing of it can be counted as passed.
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      process.stdout.write(`${lane.name.padEnd(width)} │ lane ended after ${seconds} s with exit code ${code}\n`);
      return { code: code || (result ? 0 : 1), result };
    }),
  );
  rmSync(dir, { recursive: true, force: true });
  const failed = lanes.some((lane) => lane.code !== 0);
  process.stdout.write(`\n${summary(lanes.map((lane) => lane.result))}\nTime:        ${((Date.now() - started) / 1000).toFixed(0)} s, ${LANES.length} lanes\n`);
  if (lanes.some((lane) => !lane.result)) process.stdout.write('A lane ended without results (see its lines above): counted as failed.\n');
  process.exit(failed ? 1 : 0);
}

main();
