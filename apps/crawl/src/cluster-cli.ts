import { readFileSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import type { CrawlStatus, KeptLetter, QueueFailures } from '@crawler/control-plane';
import { parseSeedList } from '@crawler/control-plane';

/**
 * Drives a running cluster through its control plane's HTTP API: `seed` submits seeds (and can wait for the
 * end), `status` reads the crawl, `pause` and `resume` stop and restart dispatching. Long waits show a
 * progress bar on a terminal and a line every few seconds otherwise.
 */
const program = new Command('crawler').description("Drive a running crawl cluster through its control plane's HTTP API");
const controlOption = ['--control <url>', 'control plane base URL (env CONTROL_PLANE_URL)', process.env.CONTROL_PLANE_URL ?? 'http://127.0.0.1:3000'] as const;
const POLL_MS = 500;
const LINE_EVERY_MS = 5000;

program
  .command('seed')
  .description('submit seeds (URLs or bare domains); --wait follows the crawl to its end')
  .argument('[seeds...]', 'seed URLs or domain names')
  .option(...controlOption)
  .option('--seeds-file <file>', 'more seeds, one a line')
  .option('--wait', 'wait until the crawl is complete, then print the status as JSON')
  .action(async (seeds: string[], options: { control: string; seedsFile?: string; wait?: boolean }) => {
    const urls = [...seeds, ...(options.seedsFile ? parseSeedList(readFileSync(options.seedsFile, 'utf8')).map((s) => (s.ok ? s.url : s.input)) : [])];
    const body = await call<{ accepted: string[] }>(options.control, 'POST', '/seeds', { urls }, 'refused the seeds');
    process.stderr.write(`submitted ${body.accepted.length} seed${body.accepted.length === 1 ? '' : 's'}\n`);
    if (!options.wait) return;
    const status = await follow(options.control, {
      done: (s) => s.complete,
      format: 'crawling [{bar}] {value}/{total} fetched · {rate}/s · {stored} stored · {errors} errors · {state}',
      progress: (s) => ({ value: s.totals.fetched ?? 0, total: (s.totals.fetched ?? 0) + s.frontier }),
    });
    process.stderr.write('crawl complete\n');
    process.stdout.write(`${JSON.stringify(status)}\n`);
  });

program
  .command('status')
  .description('the crawl at a glance: state, totals, stages with queue depths and rates, top hosts, recent errors')
  .option(...controlOption)
  .option('--json', 'print the whole status as JSON')
  .action(async (options: { control: string; json?: boolean }) => {
    const status = await getStatus(options.control);
    process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
  });

program
  .command('pause')
  .description('stop dispatching URLs (requests in flight finish; new URLs keep queueing)')
  .option(...controlOption)
  .option('--reason <text>', 'why, shown in the status and on the dashboard')
  .option('--wait', 'wait until no request is in flight')
  .action(async (options: { control: string; reason?: string; wait?: boolean }) => {
    const pause = await call<{ since: string }>(options.control, 'POST', '/pause', options.reason ? { reason: options.reason } : {}, 'did not pause');
    process.stderr.write(`paused since ${pause.since}\n`);
    if (!options.wait) return;
    let initial: number | undefined;
    await follow(options.control, {
      done: (s) => s.drained || !s.paused,
      format: 'draining [{bar}] {value}/{total} requests finished · {state}',
      progress: (s) => {
        initial ??= Math.max(s.inFlight, 1);
        return { value: Math.max(0, initial - s.inFlight), total: Math.max(initial, s.inFlight) };
      },
    });
    process.stderr.write('drained: nothing in flight\n');
  });

program
  .command('resume')
  .description('dispatch again')
  .option(...controlOption)
  .action(async (options: { control: string }) => {
    await call(options.control, 'POST', '/resume', {}, 'did not resume');
    process.stderr.write('resumed\n');
  });

program
  .command('failed')
  .description('messages whose attempts ran out, by queue, with why; --replay sends them round again (after fixing the cause)')
  .option(...controlOption)
  .option('--queue <name>', 'one queue only')
  .option('--replay', 'send the failed messages round again')
  .action(async (options: { control: string; queue?: string; replay?: boolean }) => {
    const query = options.queue ? `?queue=${encodeURIComponent(options.queue)}` : '';
    const failures = await call<QueueFailures[]>(options.control, 'GET', `/failed${query}`, undefined, 'could not list failed messages');
    if (failures.length === 0) process.stdout.write('no failed messages\n');
    for (const f of failures) {
      process.stdout.write(`${f.queue}: ${f.count} failed job${f.count === 1 ? '' : 's'}\n`);
      for (const m of f.recent) process.stdout.write(`  ${m.failedAt}  ${m.reason}  ${summary(m.payload)}\n`);
    }
    if (!options.replay) return;
    const { replayed } = await call<{ replayed: Record<string, number> }>(options.control, 'POST', '/failed/replay', options.queue ? { queue: options.queue } : {}, 'did not replay');
    const total = Object.values(replayed).reduce((a, b) => a + b, 0);
    process.stderr.write(`replayed ${total} message${total === 1 ? '' : 's'}${total ? `: ${Object.entries(replayed).map(([q, n]) => `${q} ${n}`).join(', ')}` : ''}\n`);
  });

program
  .command('dead-letters')
  .description('the most recent malformed messages, with their queue and why they were refused')
  .option(...controlOption)
  .action(async (options: { control: string }) => {
    const { letters } = await call<{ letters: KeptLetter[] }>(options.control, 'GET', '/dead-letters', undefined, 'could not list dead letters');
    if (letters.length === 0) process.stdout.write('no dead letters\n');
    for (const l of letters) process.stdout.write(`${l.at}  ${l.queue}  ${l.reason}  ${summary(l.payload)}\n`);
  });

/** A payload in one short line: enough to recognise it. */
function summary(payload: unknown): string {
  const text = JSON.stringify(payload) ?? String(payload);
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

interface FollowOptions {
  done: (s: CrawlStatus) => boolean;
  format: string;
  progress: (s: CrawlStatus) => { value: number; total: number };
}

/** Polls the status until `done`, with a progress bar on a terminal and a line every few seconds otherwise. */
async function follow(control: string, options: FollowOptions): Promise<CrawlStatus> {
  const bar = process.stderr.isTTY ? new SingleBar({ format: options.format, hideCursor: true, stream: process.stderr }) : undefined;
  let started = false;
  let lastLine = 0;
  try {
    for (;;) {
      const status = await getStatus(control);
      const { value, total } = options.progress(status);
      const payload = {
        rate: status.rates.fetched ?? 0,
        stored: status.totals.stored ?? 0,
        errors: errorCount(status.totals),
        state: state(status),
      };
      if (bar) {
        if (!started) bar.start(Math.max(total, 1), value, payload);
        started = true;
        bar.setTotal(Math.max(total, 1));
        bar.update(value, payload);
      } else if (Date.now() - lastLine >= LINE_EVERY_MS || options.done(status)) {
        lastLine = Date.now();
        process.stderr.write(`${value}/${total} · ${payload.rate}/s · ${payload.stored} stored · ${payload.errors} errors · ${payload.state}\n`);
      }
      if (options.done(status)) return status;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    bar?.stop();
  }
}

function state(s: CrawlStatus): string {
  if (s.paused) return s.drained ? 'paused' : `pausing (${s.inFlight} in flight)`;
  return s.complete ? 'complete' : `${s.pending} pending`;
}

function errorCount(totals: Record<string, number>): number {
  return Object.entries(totals)
    .filter(([k]) => k.startsWith('error.') || k === 'status.4xx' || k === 'status.5xx')
    .reduce((n, [, v]) => n + v, 0);
}

function formatStatus(s: CrawlStatus): string {
  const t = s.totals;
  const n = (v: number | undefined) => (v ?? 0).toLocaleString('en-US');
  const lines = [
    `state        ${state(s)}${s.paused && s.pause.reason ? ` — ${s.pause.reason}` : ''}`,
    `fetched      ${n(t.fetched)} (${s.rates.fetched ?? 0}/s)   stored ${n(t.stored)}   duplicates ${n((t.duplicate ?? 0) + (t['duplicate.near'] ?? 0))}   errors ${n(errorCount(t))}`,
    `frontier     ${n(s.frontier)} URLs, ${n(s.inFlight)} in flight   downloaders ${s.downloaders}`,
    '',
    'stage            queue          depth      output',
    ...s.stages.map((st) => `${st.label.padEnd(16)} ${st.queue.padEnd(14)} ${String(st.depth).padStart(5)}   ${n(st.total)} ${st.unit} (${st.perSecond}/s)`),
  ];
  if (s.topHosts.length) {
    lines.push('', 'top hosts (recent requests · fetched · queued)');
    for (const h of s.topHosts) lines.push(`  ${h.host.padEnd(36)} ${String(h.recentRequests).padStart(5)} ${String(h.fetched).padStart(7)} ${String(h.queued).padStart(7)}`);
  }
  if (s.recentErrors.length) {
    lines.push('', 'recent errors');
    for (const e of s.recentErrors.slice(0, 10)) lines.push(`  ${e.at}  ${`${e.kind}${e.status ? ` ${e.status}` : ''}`.padEnd(9)} ${e.url}${e.error ? `  ${e.error}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

function getStatus(control: string): Promise<CrawlStatus> {
  return call<CrawlStatus>(control, 'GET', '/status', undefined, 'could not give its status');
}

async function call<T>(control: string, method: string, path: string, body: unknown, failure: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(new URL(path, control), {
      method,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach the control plane at ${control}: ${cause?.code ?? cause?.message ?? String(error)}`);
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`control plane ${failure} (HTTP ${response.status}): ${text}`);
  return JSON.parse(text) as T;
}

program.parseAsync().catch((error) => {
  process.stderr.write(`crawler: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
