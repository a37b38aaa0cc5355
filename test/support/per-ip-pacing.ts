import type { LoggedRequest } from '../web/test-web';

/** The per-IP interval the per-IP tests crawl their shared address with (FRONTIER_PER_IP_INTERVAL_MS). */
export const IP_INTERVAL_MS = 300;

/**
 * A gap at the server shorter than the interval by more than this is closer than the base rule paces: requests
 * sent together, or paced at a grown allowance (five times the base: 60 ms apart), arrive that close. The tests
 * of a grown allowance count such gaps; the base rule is judged by `tooCloseRuns`.
 */
export const ARRIVAL_JITTER_MS = IP_INTERVAL_MS / 2;

/**
 * How much later than the request after it one request may reach the test web on a loaded machine: pacing
 * applies when the frontier hands a URL out, and the trip to the server (a queue, a socket, a busy core)
 * varies. A CI run beside the image builds has seen 213 ms.
 */
const ARRIVAL_DELAY_MS = 250;

/**
 * The runs of consecutive requests that span less than the intervals they hold, less one arrival delay: none
 * when the requests were paced IP_INTERVAL_MS apart. One request held up on its way shortens one gap at the
 * server but cannot make the pace drift, so runs are judged rather than single gaps (20 requests must still
 * span 19 intervals less 250 ms).
 */
export function tooCloseRuns(requests: readonly Pick<LoggedRequest, 'at' | 'host' | 'path'>[]) {
  const tooClose: { requests: number; spanMs: number; from: string; to: string }[] = [];
  for (let i = 0; i < requests.length; i++) {
    for (let j = i + 1; j < requests.length; j++) {
      const spanMs = Math.round(requests[j].at - requests[i].at);
      if (spanMs < (j - i) * IP_INTERVAL_MS - ARRIVAL_DELAY_MS) {
        tooClose.push({ requests: j - i + 1, spanMs, from: `${requests[i].host}${requests[i].path}`, to: `${requests[j].host}${requests[j].path}` });
      }
    }
  }
  return tooClose;
}
