import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The deploy test (compose-stack-*.test.ts, one file a stack, run side by side): the Compose stack as its users start it, on a real Docker engine: the images built from this checkout,
 * `docker compose up` with the demo web (docker-compose.demo.yml) on an internal network with no route out,
 * the demo's own one-shot seeding it through the CLI image, and the crawl followed to its end while the
 * downloaders are scaled 1 → 3 → 1 and a downloader and the parser are killed with SIGKILL. Then, counted
 * from the demo web's own request log, every page was fetched, none that robots.txt refuses, and none twice
 * beyond what a killed downloader had in flight; every page is recorded in PostgreSQL and its content is in
 * S3; and `docker compose down -v` leaves no container, network or volume. Once on one Redis, once on a
 * Redis Cluster. Base images come from NODE_IMAGE, REDIS_IMAGE, POSTGRES_IMAGE, MINIO_IMAGE and
 * MINIO_MC_IMAGE when set (scripts/base-images/build.sh makes them without a registry); build-images.ts builds
 * the crawler's image once, before both.
 */

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);
const MINUTE = 60_000;
// Small enough for a CI run, large enough that the scaling and the kills happen mid-crawl.
const PAGES_PER_SITE = 120;
const SITES = ['news.demo.test', 'shop.demo.test', 'blog.demo.test', 'wiki.demo.test', 'docs.demo.test', 'forum.demo.test'];
interface DemoWeb {
  pageUrls(): string[];
  disallowedUrls(): string[];
}
/** The demo web is a plain script (it runs in the crawler's image as it is); required for the site map it serves. */
const { demoWeb } = require('../../scripts/demo-web.js') as { demoWeb: (options: { sites: string[]; pages: number; port: number }) => DemoWeb };
const web = demoWeb({ sites: SITES, pages: PAGES_PER_SITE, port: 80 });

interface Stack {
  name: string;
  project: string;
  files: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * The stack's settings. Each stack has its own host ports and its own subnet for the demo web (`block`), so
 * that the two stacks run side by side, and a stack a user runs on this machine is left alone.
 */
function stackEnv(block: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CONTROL_PLANE_TOKEN: randomBytes(24).toString('hex'),
    DEMO_WEB_PAGES: String(PAGES_PER_SITE),
    DEMO_WEB_LATENCY_MS: '20',
    DEMO_DELAY_MS: '250',
    DEMO_PER_IP_INTERVAL_MS: '0',
    CONTROL_PLANE_PORT: String(3900 + 10 * block),
    MINIO_CONSOLE_PORT: String(3901 + 10 * block),
    DEMO_SUBNET: `172.30.${77 + block}.0/24`,
    DEMO_WEB_ADDRESS: `172.30.${77 + block}.80`,
  };
}

function compose(stack: Stack, args: string[], timeout = 10 * MINUTE) {
  const files = stack.files.flatMap((file) => ['-f', join(ROOT, file)]);
  return run('docker', ['compose', '--project-directory', ROOT, '-p', stack.project, ...files, ...args], { env: stack.env, timeout, maxBuffer: 256 * 1024 * 1024 });
}

const docker = (args: string[], timeout = MINUTE) => run('docker', args, { timeout, maxBuffer: 64 * 1024 * 1024 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(0)} s`;
const report = (line: string) => process.stderr.write(`[deploy] ${line}\n`);

/** The demo web's requests so far, from its own log: one {host, path, status} a line. */
async function webRequests(stack: Stack): Promise<{ host: string; path: string; status: number }[]> {
  const { stdout } = await compose(stack, ['logs', '--no-log-prefix', '--no-color', 'demo-web']);
  // Compose may start a line with a terminal control sequence even with --no-color: the JSON is what follows it.
  return stdout
    .split('\n')
    .filter((line) => line.includes('{"host"'))
    .map((line) => JSON.parse(line.slice(line.indexOf('{'))));
}

const urlOf = (r: { host: string; path: string }) => `http://${r.host}${r.path}`;

async function fetchedShare(stack: Stack): Promise<number> {
  const fetched = new Set((await webRequests(stack)).filter((r) => r.status === 200).map(urlOf));
  return web.pageUrls().filter((url) => fetched.has(url)).length / web.pageUrls().length;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    // Each probe starts docker compose, and the status probe a CLI container: on two cores, polling every
    // 2 s took a large share of the CPU the two stacks were crawling with.
    await sleep(5000);
  }
}

const containersOf = async (stack: Stack, service: string) =>
  (await compose(stack, ['ps', '-q', service])).stdout
    .split('\n')
    .map((id) => id.trim())
    .filter(Boolean);

async function status(stack: Stack): Promise<{ complete: boolean; totals: Record<string, number>; pending: number }> {
  const { stdout } = await compose(stack, ['run', '--rm', '-T', 'cli', 'status', '--json'], 2 * MINUTE);
  return JSON.parse(stdout);
}

async function sql(stack: Stack, query: string): Promise<string[][]> {
  const { stdout } = await compose(stack, ['exec', '-T', 'postgres', 'psql', '-U', 'crawler', '-d', 'crawler', '-tA', '-F', '\t', '-c', query]);
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));
}

/** The bucket's objects and their sizes, listed from inside the network with the crawler's own S3 client. */
async function storedObjects(stack: Stack): Promise<Map<string, number>> {
  const script = `
    const { Client } = require('/app/node_modules/minio');
    const url = new URL(process.env.S3_URL);
    const client = new Client({ endPoint: url.hostname, port: Number(url.port), useSSL: false, accessKey: decodeURIComponent(url.username), secretKey: decodeURIComponent(url.password) });
    const objects = [];
    client.listObjectsV2(process.env.S3_BUCKET, '', true)
      .on('data', (o) => objects.push([o.name, o.size]))
      .on('error', (e) => { console.error(e.message); process.exit(1); })
      .on('end', () => console.log(JSON.stringify(objects)));`;
  const { stdout } = await compose(stack, [
    'run',
    '--rm',
    '-T',
    '--no-deps',
    '-e',
    'S3_URL=http://crawler:change-me-crawler-secret@minio:9000',
    '-e',
    'S3_BUCKET=crawler',
    '--entrypoint',
    'node',
    'cli',
    '-e',
    script,
  ]);
  return new Map(JSON.parse(stdout));
}

/**
 * `docker compose up -d`; when it fails, the error says why in its first lines: Compose's own last lines, each
 * container's state and health, and the end of the log of every container that is not running and healthy.
 * A CI log shows only the start and the end of a long failure message, and Compose's reason is its last line.
 */
async function up(stack: Stack): Promise<void> {
  try {
    await compose(stack, ['up', '-d', '--no-build'], 15 * MINUTE);
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? (error as Error).message);
    const states = await compose(stack, ['ps', '-a', '--format', '{{.Service}}\t{{.State}}\t{{.Status}}']).then(
      (r) => r.stdout.trim().split('\n'),
      () => [],
    );
    const troubled = states.filter((line) => /unhealthy|starting|restarting|created/i.test(line) || /Exited \([1-9]/.test(line)).map((line) => line.split('\t')[0]);
    const logs = await Promise.all(
      [...new Set(troubled)].map((service) =>
        compose(stack, ['logs', '--no-color', '--tail', '15', service]).then(
          (r) => `-- ${service}:\n${r.stdout}${r.stderr}`,
          () => `-- ${service}: no log`,
        ),
      ),
    );
    const reason = stderr.trim().split('\n').slice(-3).join('\n');
    throw new Error(`docker compose up failed: ${reason}\ncontainers:\n${states.join('\n')}\n${logs.join('\n')}`);
  }
}

/** What Docker still holds of a project: containers, networks, volumes. */
async function leftovers(stack: Stack): Promise<string[]> {
  const label = `label=com.docker.compose.project=${stack.project}`;
  const lists = await Promise.all([
    docker(['ps', '-aq', '--filter', label]),
    docker(['network', 'ls', '-q', '--filter', label]),
    docker(['volume', 'ls', '-q', '--filter', label]),
  ]);
  return lists.flatMap(({ stdout }) => stdout.split('\n').filter(Boolean));
}

/** The stacks: one Redis, or a Redis Cluster (docker-compose.cluster.yml). */
const STACKS = {
  node: { name: 'one Redis', files: ['docker-compose.yml', 'docker-compose.demo.yml', 'test/containers/compose.internal.yml'] },
  cluster: { name: 'a Redis Cluster', files: ['docker-compose.yml', 'docker-compose.cluster.yml', 'docker-compose.demo.yml', 'test/containers/compose.internal.yml'] },
};

/** The deploy test of one stack; `block` keeps its host ports and subnet apart from the other's. */
export function describeStack(kind: keyof typeof STACKS, block: number): void {
  const { name, files } = STACKS[kind];
  const stack: Stack = { name, project: `crawler-deploy-${kind}`, files, env: stackEnv(block) };
  describe(`docker compose up, on ${name}, crawling the demo web`, () => {
    afterAll(async () => {
      await compose(stack, ['down', '-v', '--remove-orphans', '--timeout', '5']).catch(() => undefined);
    }, 5 * MINUTE);

    it(
      'crawls every page once, through scaling and SIGKILLs, keeps every page, and leaves nothing behind',
      async () => {
        await compose(stack, ['down', '-v', '--remove-orphans', '--timeout', '5']);
        const started = Date.now();
        // --no-build: the images are this checkout's, built above; demo-seed seeds the sites once the control plane is healthy.
        await up(stack);
        await until('the demo seeds to be submitted', 10 * MINUTE, async () => {
          const { stdout } = await compose(stack, ['ps', '-a', '--format', '{{.Service}} {{.State}} {{.ExitCode}}', 'demo-seed']);
          if (/exited [1-9]/.test(stdout)) throw new Error(`demo-seed failed: ${(await compose(stack, ['logs', 'demo-seed'])).stdout}`);
          return /exited 0/.test(stdout);
        });
        report(`${name}: stack up and seeded in ${seconds(started)}`);
        const crawling = Date.now();

        const atShare = (share: number) => until(`${share * 100} % of the pages fetched`, 10 * MINUTE, async () => (await fetchedShare(stack)) >= share);
        await atShare(0.1);
        await compose(stack, ['up', '-d', '--no-build', '--no-recreate', '--scale', 'downloader=3', 'downloader']);
        expect(await containersOf(stack, 'downloader')).toHaveLength(3);
        report(`${name}: 3 downloaders at ${seconds(crawling)}`);

        await atShare(0.3);
        const [, killed] = await containersOf(stack, 'downloader');
        await docker(['kill', '--signal', 'KILL', killed]);
        report(`${name}: a downloader killed at ${seconds(crawling)}`);

        await atShare(0.45);
        const [parser] = await containersOf(stack, 'content-parser');
        await docker(['kill', '--signal', 'KILL', parser]);
        report(`${name}: the parser killed at ${seconds(crawling)}`);
        await sleep(3000);
        // What an orchestrator does for a crashed service: start it again (Docker does not, after `docker kill`).
        await docker(['start', parser]);

        await atShare(0.6);
        await compose(stack, ['up', '-d', '--no-build', '--no-recreate', '--scale', 'downloader=1', 'downloader']);
        expect(await containersOf(stack, 'downloader')).toHaveLength(1);
        report(`${name}: back to 1 downloader at ${seconds(crawling)}`);

        const final = await until('the crawl to complete', 15 * MINUTE, async () => {
          const s = await status(stack);
          return s.complete && s;
        });
        report(`${name}: crawl complete in ${seconds(crawling)} (${JSON.stringify(final.totals)})`);

        const requests = await webRequests(stack);
        const counts = new Map<string, number>();
        for (const r of requests.filter((q) => q.path !== '/robots.txt')) counts.set(urlOf(r), (counts.get(urlOf(r)) ?? 0) + 1);
        const missing = web.pageUrls().filter((url) => !counts.has(url));
        expect(missing).toEqual([]);
        for (const refused of web.disallowedUrls()) expect(counts.get(refused)).toBeUndefined();
        // Fetched twice: only what the killed downloader had in flight, at most one request per site (one at a
        // time per host); the parser's restart re-parses stored pages, it fetches nothing again.
        const twice = [...counts].filter(([, n]) => n > 1);
        report(`${name}: ${requests.length} requests, ${twice.length} pages fetched twice: ${twice.map(([url]) => url).join(' ')}`);
        expect(twice.length).toBeLessThanOrEqual(SITES.length);
        expect(twice.every(([, n]) => n === 2)).toBe(true);

        const pages = new Map((await sql(stack, 'SELECT url, content_key FROM pages WHERE status = 200')).map(([url, key]) => [url, key]));
        const duplicates = new Set((await sql(stack, 'SELECT url FROM duplicates')).map(([url]) => url));
        const unrecorded = web.pageUrls().filter((url) => !pages.has(url) && !duplicates.has(url));
        expect(unrecorded).toEqual([]);
        const objects = await storedObjects(stack);
        const unstored = [...pages].filter(([, key]) => {
          const [object, range] = key.split('#');
          const [offset, length] = range.split('.').map(Number);
          return !(offset + length <= (objects.get(object) ?? -1));
        });
        expect(unstored).toEqual([]);
        report(`${name}: ${pages.size} pages recorded and stored, ${duplicates.size} duplicates, ${objects.size} objects`);

        await compose(stack, ['down', '-v', '--remove-orphans', '--timeout', '30'], 5 * MINUTE);
        expect(await leftovers(stack)).toEqual([]);
      },
      45 * MINUTE,
    );
  });
}
