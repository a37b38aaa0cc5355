import type { FetchOutcome } from '@crawler/contracts';

export interface PolitenessSettings {
  minDelayMs: number;
  delayMultiplier: number;
}

export type DelayCause = 'none' | 'floor' | 'robots' | 'latency';

/**
 * How long a host must rest after a turn: max(robots Crawl-delay, configured floor, multiplier × response
 * time). A turn that sent no request (robots disallowed it, the name did not resolve) owes no delay.
 */
export function politeDelay(outcome: FetchOutcome, settings: PolitenessSettings): { delayMs: number; cause: DelayCause } {
  if (!outcome.requested) return { delayMs: 0, cause: 'none' };
  const candidates: [number, DelayCause][] = [
    [settings.minDelayMs, 'floor'],
    [outcome.crawlDelayMs ?? 0, 'robots'],
    [Math.round(settings.delayMultiplier * outcome.durationMs), 'latency'],
  ];
  const [delayMs, cause] = candidates.reduce((best, c) => (c[0] > best[0] ? c : best));
  return { delayMs, cause };
}
