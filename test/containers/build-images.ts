import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/**
 * The deploy test's global setup: the crawler's image built from this checkout, once, before the stacks'
 * files start side by side (each starts its stack with --no-build).
 */
export default async function buildImages(): Promise<void> {
  await run('docker', ['info'], { timeout: 60_000 }).catch((error) => {
    throw new Error(`no Docker engine answers (${error.message.trim()}): start dockerd first (.ci/run does)`);
  });
  const started = Date.now();
  const files = ['-f', join(ROOT, 'docker-compose.yml')];
  await run('docker', ['compose', '--project-directory', ROOT, '-p', 'crawler-deploy-build', ...files, 'build', 'frontier'], {
    timeout: 30 * 60_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  process.stderr.write(`[deploy] images built in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}
