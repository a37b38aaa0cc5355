import { join } from 'node:path';
import { readLuaScript } from '@crawler/redis';

/**
 * How many messages the jobs of one BullMQ queue hold, by state. A job's name says how many messages its
 * envelope was sent with (`envelopeName`), so the count reads one short hash field per job rather than
 * decoding its data; a job that failed for good keeps only the messages that failed, and says how many in
 * its `progress` (see the driver's `process`). Jobs written before names carried the count are decoded.
 *
 * The script reads at most `maxJobs` jobs of each state and scales their sum up to the state's job count, so
 * a scrape costs O(maxJobs) whatever the backlog: exact below that many jobs, an estimate past it (envelopes
 * of one queue are filled alike, so the estimate is close). One script is one atomic read: no job is counted
 * twice or missed while it moves between states.
 */
export const ENVELOPE_COUNT_SCRIPT = readLuaScript(join(__dirname, 'envelope-count.lua'));

/** The name of a job carrying `messages` messages: what ENVELOPE_COUNT_SCRIPT reads. */
export function envelopeName(messages: number): string {
  return `envelope of ${messages}`;
}
