import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { CrawlStatus, parseSeedList } from '@crawler/control-plane';

/** Talks to a running cluster's control plane: `seed` submits seeds (and can wait for the end), `status` reads it. */
const program = new Command('crawler').description("Drive a running crawl cluster through its control plane's HTTP API");
const controlOption = ['--control <url>', 'control plane base URL', process.env.CONTROL_PLANE_URL ?? 'http://127.0.0.1:3000'] as const;

program
  .command('seed')
  .argument('[seeds...]', 'seed URLs or domain names')
  .option(...controlOption)
  .option('--seeds-file <file>', 'more seeds, one a line')
  .option('--wait', 'wait until the crawl is complete, then print the status')
  .action(async (seeds: string[], options: { control: string; seedsFile?: string; wait?: boolean }) => {
    const urls = [...seeds, ...(options.seedsFile ? parseSeedList(readFileSync(options.seedsFile, 'utf8')).map((s) => (s.ok ? s.url : s.input)) : [])];
    const response = await fetch(new URL('/seeds', options.control), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ urls }),
    });
    const body = (await response.json()) as { accepted: string[] };
    if (!response.ok) throw new Error(`control plane refused the seeds: ${JSON.stringify(body)}`);
    process.stderr.write(`submitted ${body.accepted.length} seeds\n`);
    if (!options.wait) return;
    for (;;) {
      const status = await getStatus(options.control);
      process.stderr.write(`\rfetched ${status.totals.fetched ?? 0} · pending jobs ${status.pending}   `);
      if (status.complete) {
        process.stderr.write('\ncrawl complete\n');
        process.stdout.write(`${JSON.stringify(status)}\n`);
        return;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  });

program
  .command('status')
  .option(...controlOption)
  .action(async (options: { control: string }) => {
    process.stdout.write(`${JSON.stringify(await getStatus(options.control), null, 2)}\n`);
  });

async function getStatus(control: string): Promise<CrawlStatus> {
  const response = await fetch(new URL('/status', control));
  if (!response.ok) throw new Error(`control plane answered ${response.status}`);
  return (await response.json()) as CrawlStatus;
}

program.parseAsync().catch((error) => {
  process.stderr.write(`crawler: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
