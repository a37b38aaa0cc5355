import { createHash } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { PluginContext, PluginHandler, PluginPage } from '@crawler/plugin-sdk';
import type { MonitorConfig } from './monitor.config';
import { compileWatches, findMatches, monitoredText, snippetOf, Watch } from './monitor-matcher';

/** One alert: a watched term (or pattern) found on one version of one page. Also the JSONL line and the webhook body. */
export interface MonitorAlert {
  /** Stable per (url, contentHash, term): a consumer can deduplicate on it. */
  id: string;
  plugin: 'monitor';
  url: string;
  term: string;
  kind: Watch['kind'];
  /** The text matched, as it appears on the page. */
  matched: string;
  /** ±60 characters around the match, whitespace-collapsed. */
  snippet: string;
  title?: string;
  contentHash: string;
  fetchedAt: string;
  /** When the alert was raised. */
  at: string;
}

/** The steps an alert goes through, in order; state `progress` (alert id → last step done) records them. */
const STEPS = ['jsonl', 'event', 'webhook'] as const;
type Step = (typeof STEPS)[number];

export const alertIdOf = (url: string, contentHash: string, term: string) => createHash('sha256').update(`${url}\0${contentHash}\0${term}`).digest('hex').slice(0, 40);

/**
 * The web monitor's work on each new parsed page: search its title and text for the configured terms and
 * patterns, and raise an alert per (page version, term): to the queue `plugin-events.monitor`, as a line of
 * the JSONL file, and as a POST to the webhook.
 *
 * Once per page version. An alert is done when its id (url, contentHash, term) is in state `alerted`,
 * recorded LAST, after all three outputs: a redelivered job, or a recrawl of the unchanged page, finds it
 * there and raises nothing; a changed page has a new contentHash, so new ids, and alerts again.
 *
 * Failures. The webhook can fail (down, slow, non-2xx): the handler throws and the job is retried. So that
 * the retry neither loses nor repeats an output, each output done is recorded per alert in state `progress`
 * as soon as it is done (JSONL line appended → `jsonl`; event sent → `event`; webhook answered 2xx →
 * `webhook`), and the retry resumes after the last step recorded: the JSONL line is not appended again,
 * the event not sent again, only the webhook is called again. A lease per page version (`lease:<id>`,
 * SET NX with a TTL) keeps two deliveries of one page from interleaving. What remains is the crash window
 * between doing a step and recording it (the process killed right after appendFile): then that one output
 * is repeated on the retry (at least once, never lost); consumers can deduplicate on `id`.
 */
@Injectable()
export class MonitorPluginHandler implements PluginHandler {
  private readonly watches: Watch[];
  private readonly jsonlFile: string;

  constructor(@Inject(PluginContext) private readonly ctx: PluginContext<MonitorConfig>) {
    this.watches = compileWatches(ctx.config.terms, ctx.config.patterns);
    this.jsonlFile = ctx.config.jsonlFile ?? join(ctx.crawler.dataDir, 'plugin-monitor', 'alerts.jsonl');
    if (this.watches.length === 0) {
      ctx.logger.warn({ event: 'monitor-nothing-watched' }, 'PLUGIN_MONITOR_TERMS and PLUGIN_MONITOR_PATTERNS are both empty: no page can raise an alert');
    }
  }

  async onPage(page: PluginPage): Promise<void> {
    if (this.watches.length === 0) return;
    const pageText = await this.ctx.pageText(page);
    const text = monitoredText(pageText);
    const title = pageText.title ?? page.title;
    const at = new Date().toISOString();
    const found: MonitorAlert[] = findMatches(text, this.watches).map((m) => ({
      id: alertIdOf(page.url, page.contentHash, m.term),
      plugin: 'monitor',
      url: page.url,
      term: m.term,
      kind: m.kind,
      matched: m.matched,
      snippet: snippetOf(text, m.index, m.matched.length),
      ...(title ? { title } : {}),
      contentHash: page.contentHash,
      fetchedAt: page.fetchedAt,
      at,
    }));
    if (found.length === 0) return;
    if ((await this.pending(found)).length === 0) return; // this page version has raised them all already

    const lease = `lease:${alertIdOf(page.url, page.contentHash, '')}`;
    const leaseMs = 60_000 + found.length * this.ctx.config.webhookTimeoutMs;
    if (!(await this.ctx.state.setIfAbsent(lease, at, leaseMs))) {
      throw new Error(`monitor: alerts of ${page.url} (${page.contentHash.slice(0, 12)}) are being raised by another delivery; retrying`);
    }
    try {
      await this.raise(await this.pending(found)); // read again under the lease: the other delivery may have finished
    } finally {
      await this.ctx.state.del(lease);
    }
  }

  /** The alerts not yet done, each with the steps it has already been through. */
  private async pending(alerts: MonitorAlert[]): Promise<{ alert: MonitorAlert; done: Step | null }[]> {
    const out: { alert: MonitorAlert; done: Step | null }[] = [];
    for (const alert of alerts) {
      if ((await this.ctx.hash('alerted').get(alert.id)) !== null) continue;
      const progress = await this.ctx.hash('progress').get(alert.id);
      const stored = progress ? (JSON.parse(progress) as { step: Step; alert: MonitorAlert }) : null;
      // A retry resends what the first attempt wrote (its `at`), so every output of one alert is identical.
      out.push(stored ? { alert: stored.alert, done: stored.step } : { alert, done: null });
    }
    return out;
  }

  private async raise(pending: { alert: MonitorAlert; done: Step | null }[]) {
    const before = (step: Step) => pending.filter((p) => p.done === null || STEPS.indexOf(p.done) < STEPS.indexOf(step));

    // 1. One appendFile for the batch of lines not yet written, then each recorded.
    const unwritten = before('jsonl');
    if (unwritten.length) {
      await mkdir(dirname(this.jsonlFile), { recursive: true });
      await appendFile(this.jsonlFile, unwritten.map((p) => `${JSON.stringify(p.alert)}\n`).join(''));
      for (const p of unwritten) await this.record(p, 'jsonl');
    }
    // 2. The queue event.
    for (const p of before('event')) {
      const { alert } = p;
      await this.ctx.emit(
        'alert',
        { id: alert.id, term: alert.term, kind: alert.kind, snippet: alert.snippet, title: alert.title ?? '', contentHash: alert.contentHash },
        alert.url,
      );
      await this.record(p, 'event');
    }
    // 3. The webhook (throws on failure: the job is retried from here).
    for (const p of before('webhook')) {
      if (this.ctx.config.webhookUrl) await this.post(p.alert);
      await this.record(p, 'webhook');
    }
    // 4. Done: from now on this page version raises nothing for these terms.
    let raised = 0;
    for (const { alert } of pending) {
      if ((await this.ctx.hash('alerted').setIfAbsent(alert.id, JSON.stringify({ url: alert.url, term: alert.term, at: alert.at }))) === null) raised++;
      this.ctx.logger.info({ event: 'monitor-alert', url: alert.url, term: alert.term, id: alert.id }, `monitor: "${alert.term}" on ${alert.url}`);
    }
    if (raised) await this.ctx.count('alerts', raised);
  }

  private async record(p: { alert: MonitorAlert; done: Step | null }, step: Step) {
    p.done = step;
    await this.ctx.hash('progress').set(p.alert.id, JSON.stringify({ step, alert: p.alert }));
  }

  private async post(alert: MonitorAlert) {
    const url = this.ctx.config.webhookUrl!;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alert),
        signal: AbortSignal.timeout(this.ctx.config.webhookTimeoutMs),
      });
    } catch (error) {
      await this.ctx.count('webhook-failed');
      throw new Error(`monitor: webhook ${url} failed for ${alert.url}: ${(error as Error).message}`);
    }
    await response.arrayBuffer().catch(() => undefined); // release the connection
    if (!response.ok) {
      await this.ctx.count('webhook-failed');
      throw new Error(`monitor: webhook ${url} answered ${response.status} for ${alert.url}`);
    }
  }
}
