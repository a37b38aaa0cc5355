import { readFileSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import type { KeptLetter, LiveCrawlStatus as CrawlStatus, OperatorAuditList, QueueFailures } from '@crawler/control-plane';
import type { FailedUrlList } from '@crawler/crawl-state';
import { parseSeed, parseSeedList, SeedParse, seedRequests } from '@crawler/control-plane';

/**
 * Drives a running cluster through its control plane's HTTP API: `seed` submits seeds (and can wait for the
 * end), `status` reads the crawl, `pause` and `resume` stop and restart dispatching. Long waits show a
 * progress bar on a terminal and a line every few seconds otherwise.
 */
const program = new Command('crawler').description("Drive a running crawl cluster through its control plane's HTTP API");
const controlOption = ['--control <url>', 'control plane base URL (env CONTROL_PLANE_URL)', process.env.CONTROL_PLANE_URL || 'http://127.0.0.1:3000'] as const;
const tokenOption = ['--token-file <file>', 'a file holding the control plane token (else env CONTROL_PLANE_TOKEN, or CONTROL_PLANE_TOKEN_FILE)'] as const;
const POLL_MS = 500;
const LINE_EVERY_MS = 5000;
/** The server's default CONTROL_PLANE_MAX_BODY_BYTES; the same variable, when set, tells the CLI a server's own. */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Bodies smaller than this are not split further when the server still answers 413. */
const MIN_SPLIT_BYTES = 4096;

/** Where the control plane is and the token it wants (never taken from the command line, where `ps` shows it). */
interface Target {
  control: string;
  token?: string;
}

function target(options: { control: string; tokenFile?: string }): Target {
  const file = options.tokenFile ?? process.env.CONTROL_PLANE_TOKEN_FILE;
  let token = options.tokenFile ? undefined : process.env.CONTROL_PLANE_TOKEN || undefined;
  if (!token && file) {
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new Error(`cannot read the token file ${file}: ${(error as Error).message}`);
    }
  }
  return { control: options.control, token };
}

program
  .command('seed')
  .description('submit seeds (URLs or bare domains); --wait follows the crawl to its end')
  .argument('[seeds...]', 'seed URLs or domain names')
  .option(...controlOption)
  .option(...tokenOption)
  .option('--seeds-file <file>', 'more seeds, one a line (any number: sent in as many requests as the server needs)')
  .option('--wait', 'wait until the crawl is complete, then print the status as JSON')
  .action(async (seeds: string[], options: { control: string; tokenFile?: string; seedsFile?: string; wait?: boolean }) => {
    const to = target(options);
    const parsed = [...seeds.map((seed) => parseSeed(seed)), ...(options.seedsFile ? parseSeedList(readFileSync(options.seedsFile, 'utf8')) : [])];
    const accepted = await submitSeeds(to, parsed);
    process.stderr.write(`submitted ${accepted} seed${accepted === 1 ? '' : 's'}\n`);
    if (!options.wait) return;
    const status = await follow(to, {
      // Nothing pending but failed work: nothing more will happen by itself, and it is not complete.
      done: (s) => s.complete || (s.pending === 0 && Object.keys(s.failed ?? {}).length > 0),
      format: 'crawling [{bar}] {value}/{total} fetched · {rate}/s · {stored} stored · {errors} errors · {state}',
      progress: (s) => ({ value: s.totals.fetched ?? 0, total: (s.totals.fetched ?? 0) + s.frontier }),
    });
    if (status.complete) process.stderr.write('crawl complete\n');
    else {
      process.stderr.write(`crawl incomplete: ${status.waitingOn}\n`);
      process.exitCode = 1;
    }
    process.stdout.write(`${JSON.stringify(status)}\n`);
  });

program
  .command('status')
  .description('the crawl at a glance: state, totals, stages with queue depths and rates, top hosts, recent errors')
  .option(...controlOption)
  .option(...tokenOption)
  .option('--json', 'print the whole status as JSON')
  .action(async (options: { control: string; tokenFile?: string; json?: boolean }) => {
    const status = await getStatus(target(options));
    process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
  });

program
  .command('pause')
  .description('stop dispatching URLs (requests in flight finish; new URLs keep queueing)')
  .option(...controlOption)
  .option(...tokenOption)
  .option('--reason <text>', 'why, shown in the status and on the dashboard')
  .option('--wait', 'wait until no request is in flight')
  .action(async (options: { control: string; tokenFile?: string; reason?: string; wait?: boolean }) => {
    const to = target(options);
    const pause = await call<{ since: string }>(to, 'POST', '/pause', options.reason ? { reason: options.reason } : {}, 'did not pause');
    process.stderr.write(`paused since ${pause.since}\n`);
    if (!options.wait) return;
    let initial: number | undefined;
    await follow(to, {
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
  .option(...tokenOption)
  .action(async (options: { control: string; tokenFile?: string }) => {
    await call(target(options), 'POST', '/resume', {}, 'did not resume');
    process.stderr.write('resumed\n');
  });

program
  .command('failed')
  .description('queue messages whose attempts ran out, by queue, with why (failed URLs: failed-urls); --replay sends them round again (after fixing the cause)')
  .option(...controlOption)
  .option(...tokenOption)
  .option('--queue <name>', 'one queue only')
  .option('--replay', 'send the failed messages round again')
  .action(async (options: { control: string; tokenFile?: string; queue?: string; replay?: boolean }) => {
    const to = target(options);
    const query = options.queue ? `?queue=${encodeURIComponent(options.queue)}` : '';
    const failures = await call<QueueFailures[]>(to, 'GET', `/failed${query}`, undefined, 'could not list failed messages');
    if (failures.length === 0) process.stdout.write('no failed messages\n');
    for (const f of failures) {
      process.stdout.write(`${f.queue}: ${f.count} failed job${f.count === 1 ? '' : 's'}\n`);
      for (const m of f.recent) process.stdout.write(`  ${m.failedAt}  ${m.reason}  ${summary(m.payload)}\n`);
    }
    if (!options.replay) return;
    const { replayed } = await call<{ replayed: Record<string, number> }>(to, 'POST', '/failed/replay', options.queue ? { queue: options.queue } : {}, 'did not replay');
    const total = Object.values(replayed).reduce((a, b) => a + b, 0);
    process.stderr.write(
      `replayed ${total} message${total === 1 ? '' : 's'}${
        total
          ? `: ${Object.entries(replayed)
              .map(([q, n]) => `${q} ${n}`)
              .join(', ')}`
          : ''
      }\n`,
    );
  });

program
  .command('failed-urls')
  .description('the URLs the crawl gave up on (after their last attempt, or a failure no retry can mend), newest first, with why')
  .option(...controlOption)
  .option(...tokenOption)
  .option('--limit <n>', 'how many (default 100, at most FRONTIER_FAILED_URLS_KEPT)')
  .option('--reason <reason>', 'one reason only (status-500, reset, timeout-total…)')
  .option('--json', 'print the list as JSON')
  .action(async (options: { control: string; tokenFile?: string; limit?: string; reason?: string; json?: boolean }) => {
    const query = new URLSearchParams({ ...(options.limit ? { limit: options.limit } : {}), ...(options.reason ? { reason: options.reason } : {}) });
    const list = await call<FailedUrlList>(target(options), 'GET', `/failed-urls?${query}`, undefined, 'could not list failed URLs');
    if (options.json) return void process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    if (list.urls.length === 0)
      process.stdout.write(list.total ? `no failed URL${options.reason ? ` of reason ${options.reason}` : ''} among the ${list.kept} kept\n` : 'no failed URLs\n');
    for (const f of list.urls) {
      const last = f.error ?? (f.status !== undefined ? `answered ${f.status}` : '');
      process.stdout.write(`${f.at}  ${f.reason.padEnd(16)} ${String(f.attempts).padStart(2)}×  ${f.url}${last ? `  ${last}` : ''}\n`);
    }
    if (list.total > list.urls.length) process.stderr.write(`${list.total} URLs failed in all (the newest ${list.kept} are kept; see the failed-urls.<reason> totals)\n`);
  });

program
  .command('dead-letters')
  .description('the most recent malformed messages, with their queue and why they were refused')
  .option(...controlOption)
  .option(...tokenOption)
  .action(async (options: { control: string; tokenFile?: string }) => {
    const { letters } = await call<{ letters: KeptLetter[] }>(target(options), 'GET', '/dead-letters', undefined, 'could not list dead letters');
    if (letters.length === 0) process.stdout.write('no dead letters\n');
    for (const l of letters) process.stdout.write(`${l.at}  ${l.queue}  ${l.reason}  ${summary(l.payload)}\n`);
  });

program
  .command('operator-audit')
  .description('the operator actions taken through the control plane (seeds, pause, resume, replays, host overrides and purges), newest first, with who and from where')
  .option(...controlOption)
  .option(...tokenOption)
  .option('--limit <n>', 'how many (default 100, at most CONTROL_PLANE_AUDIT_KEPT)')
  .option('--json', 'print the list as JSON')
  .action(async (options: { control: string; tokenFile?: string; limit?: string; json?: boolean }) => {
    const query = options.limit ? `?limit=${encodeURIComponent(options.limit)}` : '';
    const list = await call<OperatorAuditList>(target(options), 'GET', `/audit${query}`, undefined, 'could not list the operator audit');
    if (options.json) return void process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    if (list.actions.length === 0) process.stdout.write('no operator actions\n');
    for (const a of list.actions) process.stdout.write(`${a.at}  ${a.action.padEnd(13)} ${a.who}  from ${a.from}  ${summary(a.detail)}\n`);
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

/**
 * Polls the status until `done`, with a progress bar on a terminal and a line every few seconds otherwise.
 * An outage does not end the wait: a stale status (the control plane could not read the crawl) is shown and
 * never judged done, and a control plane that answers 5xx or cannot be reached (restarting) is asked again.
 */
async function follow(control: Target, options: FollowOptions): Promise<CrawlStatus> {
  const bar = process.stderr.isTTY ? new SingleBar({ format: options.format, hideCursor: true, stream: process.stderr }) : undefined;
  let started = false;
  let lastLine = 0;
  let lastProblem = 0;
  try {
    for (;;) {
      let status: CrawlStatus;
      try {
        status = await getStatus(control);
      } catch (error) {
        if (!passing(error)) throw error;
        if (Date.now() - lastProblem >= LINE_EVERY_MS) {
          lastProblem = Date.now();
          process.stderr.write(`${(error as Error).message.split('\n')[0]} (still waiting)\n`);
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
        continue;
      }
      const { value, total } = options.progress(status);
      const payload = {
        rate: status.rates.fetched ?? 0,
        stored: status.totals.stored ?? 0,
        errors: errorCount(status.totals),
        state: state(status),
      };
      const done = !status.stale && options.done(status);
      if (bar) {
        if (!started) bar.start(Math.max(total, 1), value, payload);
        started = true;
        bar.setTotal(Math.max(total, 1));
        bar.update(value, payload);
      } else if (Date.now() - lastLine >= LINE_EVERY_MS || done) {
        lastLine = Date.now();
        process.stderr.write(`${value}/${total} · ${payload.rate}/s · ${payload.stored} stored · ${payload.errors} errors · ${payload.state}\n`);
      }
      if (done) return status;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    bar?.stop();
  }
}

/** A failure that passes: the control plane unreachable (restarting) or answering 5xx. A refusal (4xx) ends the wait. */
function passing(error: unknown): boolean {
  return error instanceof ControlPlaneError && (error.status === 0 || error.status >= 500);
}

function state(s: CrawlStatus): string {
  if (s.stale) return `figures from ${Math.round(s.ageMs / 1000)} s ago${s.waitingOn ? `: ${s.waitingOn}` : ''}${s.readError ? ` (${s.readError})` : ''}`;
  if (s.paused) return s.drained ? 'paused' : `pausing (${s.inFlight} in flight)`;
  if (s.complete) return 'complete';
  const waiting = [s.waitingOnly, s.waitingOn].filter(Boolean).join('; ');
  return waiting ? `${s.pending} pending, ${waiting}` : `${s.pending} pending`;
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
    for (const h of s.topHosts)
      lines.push(`  ${h.host.padEnd(36)} ${String(h.recentRequests).padStart(5)} ${String(h.fetched).padStart(7)} ${String(h.queued).padStart(7)}`);
  }
  if (s.hostsSetAside?.length) {
    lines.push('', 'hosts set aside (not fetched)');
    for (const h of s.hostsSetAside) lines.push(`  ${h.host.padEnd(36)} ${h.reason.padEnd(18)} ${String(h.urls).padStart(7)} URLs  ${h.detail}`);
  }
  if (s.recentErrors.length) {
    lines.push('', 'recent errors');
    for (const e of s.recentErrors.slice(0, 10))
      lines.push(`  ${e.at}  ${`${e.kind}${e.status ? ` ${e.status}` : ''}`.padEnd(9)} ${e.url}${e.error ? `  ${e.error}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

function getStatus(control: Target): Promise<CrawlStatus> {
  return call<CrawlStatus>(control, 'GET', '/status', undefined, 'could not give its status');
}

/**
 * Validates every seed first, as the server would, so that a bad line refuses the whole list before any of
 * it is sent; then sends it in requests within the server's body limit. A 413 (a server with a smaller
 * limit) splits the request in two and tries again.
 */
async function submitSeeds(to: Target, parsed: SeedParse[]): Promise<number> {
  const bad = parsed.flatMap((p) => (p.ok ? [] : [p]));
  if (bad.length) {
    const shown = bad
      .slice(0, 10)
      .map((p) => `"${p.input}" (${p.reason})`)
      .join(', ');
    throw new Error(`bad seeds, nothing submitted: ${shown}${bad.length > 10 ? `, and ${bad.length - 10} more` : ''}`);
  }
  if (parsed.length === 0) throw new Error('no seeds given: name URLs or domains, or --seeds-file');
  const urls = parsed.map((p) => (p as { url: string }).url);
  const pending = seedRequests(urls, Number(process.env.CONTROL_PLANE_MAX_BODY_BYTES) || DEFAULT_MAX_BODY_BYTES);
  let accepted = 0;
  while (pending.length) {
    const chunk = pending.shift()!;
    try {
      accepted += (await call<{ accepted: string[] }>(to, 'POST', '/seeds', { urls: chunk }, 'refused the seeds')).accepted.length;
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status === 413 && chunk.length > 1 && Buffer.byteLength(JSON.stringify(chunk)) > MIN_SPLIT_BYTES) {
        pending.unshift(chunk.slice(0, chunk.length >> 1), chunk.slice(chunk.length >> 1));
        continue;
      }
      const done = accepted ? ` (${accepted} of ${urls.length} seeds were submitted before)` : '';
      throw new Error(`${(error as Error).message}${done}`);
    }
  }
  return accepted;
}

class ControlPlaneError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function call<T>(to: Target, method: string, path: string, body: unknown, failure: string): Promise<T> {
  let response: Response;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (to.token) headers.authorization = `Bearer ${to.token}`;
  try {
    response = await fetch(new URL(path, to.control), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ControlPlaneError(`cannot reach the control plane at ${to.control}: ${cause?.code ?? cause?.message ?? String(error)}`, 0);
  }
  const text = await response.text();
  if (response.status === 401) {
    const hint = to.token ? 'the token it was given is wrong' : 'it needs its token: set CONTROL_PLANE_TOKEN (or --token-file)';
    throw new ControlPlaneError(`control plane ${failure} (HTTP 401): ${hint}`, 401);
  }
  if (!response.ok) throw new ControlPlaneError(`control plane ${failure} (HTTP ${response.status}): ${text.slice(0, 500)}`, response.status);
  return JSON.parse(text) as T;
}

program.parseAsync().catch((error) => {
  process.stderr.write(`crawler: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
