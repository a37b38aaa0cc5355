import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeTempDirs, tempDir } from '../support/temp-dirs';

afterAll(removeTempDirs);

const ROOT = join(__dirname, '../..');
const JEST = require.resolve('jest/bin/jest');

/**
 * Runs jest as `npm test` does, with the project's transform and global teardown, on spec files written for
 * the occasion; answers its exit code and output. `forceExit` lets a run whose spec leaves something open end
 * once the teardown has reported it.
 */
function runJest(specs: Record<string, string>, { forceExit = false } = {}): Promise<{ code: number | null; output: string }> {
  const dir = tempDir('test-runner-');
  for (const [name, text] of Object.entries(specs)) writeFileSync(join(dir, name), text);
  const base = require(join(ROOT, 'jest.config.js'));
  const config = {
    rootDir: dir,
    testEnvironment: 'node',
    testMatch: ['**/*.spec.js'],
    // Resolved from here: the temporary directory has no node_modules.
    transform: Object.fromEntries(Object.entries(base.transform).map(([pattern, [name, options]]: [string, any]) => [pattern, [require.resolve(name), options]])),
    globalTeardown: base.globalTeardown.replace('<rootDir>', ROOT),
    forceExit,
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [JEST, '--config', JSON.stringify(config), '--runInBand'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The test runner itself: what `npm test` relies on to tell a failed run from a good one. */
describe('jest as npm test runs it', () => {
  it('exits non-zero when a test fails, the global teardown notwithstanding', async () => {
    const run = await runJest({ 'fails.spec.js': "it('fails', () => expect(1).toBe(2));\n" });
    expect(run.output).toContain('1 failed');
    expect(run.code).toBe(1);
  }, 30_000);

  it('exits zero when every test passes, with nothing reported open', async () => {
    const run = await runJest({ 'passes.spec.js': "it('passes', () => expect(1).toBe(1));\n" });
    expect(run.code).toBe(0);
    expect(run.output).not.toContain('Still open');
  }, 30_000);

  it('names a server a test left listening', async () => {
    const leaks = "const { createServer } = require('node:net');\nit('leaves a server open', (done) => { createServer().listen(0, '127.0.0.1', done); });\n";
    const run = await runJest({ 'leaks.spec.js': leaks }, { forceExit: true });
    expect(run.output).toMatch(/Still open 5 s after the last test[^\n]*\n\s+- Server listening on \{"address":"127\.0\.0\.1"/);
  }, 30_000);
});
