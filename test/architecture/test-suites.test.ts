import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run test:unit` leaves out the end-to-end directories and the spec files test/suites.js lists as needing
 * infrastructure. This keeps that list true as spec files come and go: it is the list of files that name a
 * piece of infrastructure in their source, no more and no fewer.
 */
const ROOT = join(__dirname, '../..');
const { E2E_DIRS, DOCKER_DIRS, NEEDS_INFRASTRUCTURE }: { E2E_DIRS: string[]; DOCKER_DIRS: string[]; NEEDS_INFRASTRUCTURE: string[] } = require('../suites');

/** Reading an infrastructure URL, connecting to Redis or PostgreSQL, starting S3, a driver contract suite, a browser. */
const NEEDS =
  /process\.env\.(REDIS_URL|REDIS_CLUSTER_URL|POSTGRES_URL|S3_URL)|from '[^']*(redis-prefix|redis-cluster|postgres-test-database|s3-test-server|\.contract)'|startS3TestServer|POSTGRES_URL|createRedis\(|from '(ioredis|pg)'|chromium/i;

function specFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => /\.(spec|test)\.ts$/.test(f));
}

const inE2e = (file: string) => [...E2E_DIRS, ...DOCKER_DIRS].some((dir) => file.startsWith(`${dir}/`));

describe('the unit / e2e split', () => {
  // This file names every marker above, and needs none of them.
  const specs = ['apps', 'libs', 'test'].flatMap(specFiles).filter((f) => !inE2e(f) && join(ROOT, f) !== __filename);
  const needing = specs.filter((f) => NEEDS.test(readFileSync(join(ROOT, f), 'utf8'))).sort();

  it('lists exactly the spec files outside the e2e directories that need infrastructure', () => {
    expect([...NEEDS_INFRASTRUCTURE].sort()).toEqual(needing);
  });

  it('runs the e2e directories, which exist, in npm run test:e2e', () => {
    const script: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['test:e2e'];
    for (const dir of E2E_DIRS) {
      expect(existsSync(join(ROOT, dir))).toBe(true);
      expect(script.split(' ')).toContain(dir);
    }
  });
});
