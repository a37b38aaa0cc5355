import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrawlCli } from './run-crawl-cli';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV } from './test-web-cluster';

/** Flags that let links alone decide what is crawled: any host, any depth. */
export const FOLLOW_EVERY_LINK = ['--scope', 'any', '--max-depth', '1000'];

/** A crawl in memory (no Redis, no S3, no plugin unless its flags ask), on the test web's terms (ONE_ADDRESS_ENV, ASK_ONCE_ENV). */
export const IN_MEMORY_TEST_ENV = { REDIS_URL: '', S3_URL: '', PLUGINS: '', ...ONE_ADDRESS_ENV, ...ASK_ONCE_ENV } as const;

export interface TestWebCrawlOptions {
  /** The seeds and the test's own flags. */
  args: string[];
  /** --delay: the least time between two requests to one host. */
  delaySeconds: number;
  /** Settings of the test's own, over IN_MEMORY_TEST_ENV. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/**
 * The embedded crawl (the built CLI) of a web that names its hosts' addresses, as a newcomer runs it: names
 * through its hosts file (written into `dir`), private addresses allowed, everything it writes in `dir`.
 * Answers the JSON summary; a crawl that exits with an error fails with what it said (stopped by the page
 * budget, exit 4, is no error here).
 */
export async function crawlTestWeb(web: { hostsFile(): string }, dir: string, options: TestWebCrawlOptions): Promise<Record<string, any>> {
  const hostsFile = join(dir, 'hosts');
  writeFileSync(hostsFile, web.hostsFile());
  const outcome = await runCrawlCli([...options.args, '--delay', String(options.delaySeconds), '--hosts-file', hostsFile, '--allow-private', '--out', dir, '--json'], {
    env: { ...process.env, ...IN_MEMORY_TEST_ENV, ...options.env },
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  if (outcome.code !== 0 && outcome.code !== 4) throw new Error(`crawl exited with ${outcome.code}\n--- stderr\n${outcome.stderr.slice(-4000)}`);
  return JSON.parse(outcome.stdout);
}

/** The lines of the fetch log the crawl wrote into `dir`, in the order of the requests. */
export function readFetchLog(dir: string): Record<string, any>[] {
  return readFileSync(join(dir, 'fetch-log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}
