import { Inject, Injectable } from '@nestjs/common';
import { PIPELINE_QUEUES, pluginQueue, QueueName } from '@crawler/contracts';
import { CRAWLER_CONFIG, CrawlerConfig } from '@crawler/config';
import { FRONTIER_STORE, FrontierStore } from '@crawler/frontier-store';
import { QUEUE_TRANSPORT, QueueCounts, QueueTransport } from '@crawler/queue';
import { CrawlStats } from './crawl-stats.service';

export interface PipelineSnapshot {
  queues: Record<string, QueueCounts>;
  /** Jobs waiting, running or delayed anywhere in the pipeline, plus URLs in the frontier. */
  pending: number;
  /** URLs in the frontier (queued or leased to a downloader). */
  frontier: number;
  /** Jobs processed so far by every process. */
  processed: number;
}

/**
 * Decides that a crawl is complete: nothing queued, running or delayed in any stage. Queue counts are read
 * one queue at a time, so a job moving between stages could be missed by one reading; a crawl is complete
 * only when two readings apart in time both see nothing pending and no job was processed in between.
 */
@Injectable()
export class CompletionProbe {
  /** The pipeline's queues and the work queues of the enabled plugins (`plugin.<name>`). */
  private readonly watched: readonly QueueName[];

  constructor(
    @Inject(QUEUE_TRANSPORT) private readonly queues: QueueTransport,
    @Inject(FRONTIER_STORE) private readonly frontierStore: FrontierStore,
    private readonly stats: CrawlStats,
    @Inject(CRAWLER_CONFIG) config: CrawlerConfig,
  ) {
    this.watched = [...PIPELINE_QUEUES, ...(config.plugins?.enabled ?? []).map(pluginQueue)];
  }

  async snapshot(): Promise<PipelineSnapshot> {
    const counts = await Promise.all(this.watched.map((q) => this.queues.counts(q)));
    const queues: Record<string, QueueCounts> = {};
    let pending = 0;
    this.watched.forEach((q, i) => {
      queues[q] = counts[i];
      pending += counts[i].waiting + counts[i].active + counts[i].delayed;
    });
    const totals = await this.stats.totals();
    const frontier = await this.frontierWork(totals);
    pending += frontier;
    const processed = Object.entries(totals)
      .filter(([k]) => k.startsWith('processed.'))
      .reduce((sum, [, v]) => sum + v, 0);
    return { queues, pending, frontier, processed };
  }

  /**
   * URLs queued, leased or scheduled for a recrawl in the frontier (a recrawling crawl never ends by
   * itself). Once the page budget is spent nothing more is dispatched, so only the leased URLs are work.
   */
  private async frontierWork(totals: Record<string, number>): Promise<number> {
    const stats = await this.frontierStore.stats();
    return (totals['frontier.budget-spent'] ?? 0) > 0 ? stats.leased : stats.size + stats.scheduled;
  }

  async isComplete(settleMs = 250): Promise<boolean> {
    const first = await this.snapshot();
    if (first.pending > 0 || first.processed === 0) return false;
    await new Promise((r) => setTimeout(r, settleMs));
    const second = await this.snapshot();
    return second.pending === 0 && second.processed === first.processed;
  }

  /**
   * Resolves when the crawl is complete; `onTick` sees each snapshot (for progress bars). `pollMs` and
   * `settleMs` (see isComplete) can be short where the counts are exact at any instant (in-process queues):
   * they are how long a finished crawl waits to be told so.
   */
  async waitForCompletion(options: { pollMs?: number; settleMs?: number; onTick?: (s: PipelineSnapshot) => void; signal?: AbortSignal } = {}) {
    const pollMs = options.pollMs ?? 200;
    for (;;) {
      if (options.signal?.aborted) return false;
      options.onTick?.(await this.snapshot());
      if (await this.isComplete(options.settleMs)) return true;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}
