/** The per-IP interval the per-IP tests crawl their shared address with (FRONTIER_PER_IP_INTERVAL_MS). */
export const IP_INTERVAL_MS = 300;

/**
 * How much less than the interval two requests to the address may arrive apart, as the test web sees them: the
 * downloader paces a request when it leaves, and the trip to the server varies. Requests sent together, or paced
 * at a grown allowance (five times the base: 60 ms apart), arrive closer than this.
 */
export const ARRIVAL_JITTER_MS = IP_INTERVAL_MS / 2;
