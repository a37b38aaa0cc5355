import { Injectable } from '@nestjs/common';
import { QueueName, SCHEMA_VERSION } from '@crawler/contracts';
import { CompletionProbe, CrawlStats, Pipeline } from '@crawler/runtime';
import { parseSeed } from './seed-list';

export class SeedError extends Error {
  constructor(readonly problems: { input: string; reason: string }[]) {
    super(`bad seeds: ${problems.map((p) => `"${p.input}" (${p.reason})`).join(', ')}`);
  }
}

export interface CrawlStatus {
  complete: boolean;
  pending: number;
  /** URLs queued in the frontier or leased to a downloader. */
  frontier: number;
  queues: Record<string, { waiting: number; active: number; delayed: number; failed: number }>;
  totals: Record<string, number>;
}

/** Seeds in, status out: the part of the control plane shared by its HTTP API and the embedded CLI. */
@Injectable()
export class CrawlControlService {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly probe: CompletionProbe,
    private readonly stats: CrawlStats,
  ) {}

  /** Validates every seed first: one bad seed refuses the whole submission, so nothing half-starts. */
  async submitSeeds(inputs: string[]): Promise<string[]> {
    const parsed = inputs.map(parseSeed);
    const problems = parsed.flatMap((p) => (p.ok ? [] : [{ input: p.input, reason: p.reason }]));
    if (problems.length || parsed.length === 0) throw new SeedError(problems.length ? problems : [{ input: '', reason: 'no seeds given' }]);
    const urls = parsed.map((p) => (p as { url: string }).url);
    for (let i = 0; i < urls.length; i += 1000) {
      const chunk = urls.slice(i, i + 1000).map((url) => ({ url, depth: 0, source: 'seed' as const, hops: 0 }));
      await this.pipeline.send(QueueName.FilterUrls, { v: SCHEMA_VERSION, urls: chunk });
    }
    await this.stats.count('seeds', urls.length);
    return urls;
  }

  async status(): Promise<CrawlStatus> {
    const [snapshot, totals] = await Promise.all([this.probe.snapshot(), this.stats.totals()]);
    const complete = snapshot.pending === 0 && (totals.seeds ?? 0) > 0 && (await this.probe.isComplete());
    return { complete, pending: snapshot.pending, frontier: snapshot.frontier, queues: snapshot.queues, totals };
  }
}
