import { PlantedWeb, TOPIC_TERMS } from '../web/planted-web';
import { crawlTestWeb, FOLLOW_EVERY_LINK, readFetchLog } from './test-web-crawl';

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
  const summary = await crawlTestWeb(web, dir, {
    args: [...web.seeds(), ...FOLLOW_EVERY_LINK, '--max-pages', String(options.maxPages), '--sitemaps', 'off', ...(options.focus ? ['--plugins', 'focus'] : [])],
    delaySeconds: options.delaySeconds ?? 0,
    env: { FRONTIER_BACK_QUEUES: '1', FRONTIER_PRIORITY_BIAS: '1000', PLUGIN_FOCUS_TERMS: TOPIC_TERMS.join(','), ...options.env },
    timeoutMs: 600_000,
  });
  const fetched = readFetchLog(dir)
    .filter((entry) => !entry.robots && entry.status === 200)
    .map((entry) => entry.url as string);
  return { fetched, relevant: fetched.filter((url) => web.isRelevant(url)).length, summary };
}
