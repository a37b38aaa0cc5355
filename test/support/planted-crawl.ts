import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PlantedWeb, TOPIC_TERMS } from '../web/planted-web';
import { ASK_ONCE_ENV, ONE_ADDRESS_ENV } from './test-web-cluster';

const run = promisify(execFile);

/** The built CLI, from the sources (jest) or from dist/ (the bench runs compiled). */
const CLI = [join(__dirname, '../../dist/apps/crawl/src/main.js'), join(__dirname, '../../apps/crawl/src/main.js')].find((file) => existsSync(file))!;

export interface PlantedCrawl {
  /** Pages fetched (robots.txt aside), in fetch order. */
  fetched: string[];
  /** How many of them are on the topic, as the planted web knows it (not as the plugin judged). */
  relevant: number;
  /** The crawl's JSON summary. */
  summary: Record<string, any>;
}

/**
 * An embedded crawl of the planted web from its seeds, with a page budget, with or without the focus
 * plugin. Few back queues and a near-strict front selector, so that the order the prioritizer chooses is the
 * order pages are fetched in, as on a large crawl where the frontier always holds more than it can serve.
 */
export async function crawlPlanted(
  web: PlantedWeb,
  dir: string,
  options: { focus: boolean; maxPages: number; env?: Record<string, string>; delaySeconds?: number },
): Promise<PlantedCrawl> {
  writeFileSync(join(dir, 'hosts'), web.hostsFile());
  const { stdout } = await run(
    process.execPath,
    [
      CLI,
      ...web.seeds(),
      '--scope',
      'any',
      '--max-depth',
      '1000',
      '--max-pages',
      String(options.maxPages),
      '--delay',
      String(options.delaySeconds ?? 0),
      '--sitemaps',
      'off',
      '--hosts-file',
      join(dir, 'hosts'),
      '--allow-private',
      '--out',
      dir,
      '--json',
      ...(options.focus ? ['--plugins', 'focus'] : []),
    ],
    {
      env: {
        ...process.env,
        REDIS_URL: '',
        S3_URL: '',
        PLUGINS: '',
        ...ONE_ADDRESS_ENV,
        ...ASK_ONCE_ENV,
        FRONTIER_BACK_QUEUES: '1',
        FRONTIER_PRIORITY_BIAS: '1000',
        PLUGIN_FOCUS_TERMS: TOPIC_TERMS.join(','),
        ...options.env,
      },
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const fetched = readFileSync(join(dir, 'fetch-log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((entry) => !entry.robots && entry.status === 200)
    .map((entry) => entry.url as string);
  return { fetched, relevant: fetched.filter((url) => web.isRelevant(url)).length, summary: JSON.parse(stdout) };
}
