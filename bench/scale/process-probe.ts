/**
 * Preloaded into every crawler process of a scale run (`NODE_OPTIONS=--require …/process-probe.js`, with
 * SCALE_PROBE_DIR set): every SCALE_PROBE_MS it writes the process's V8 heap in use and the p99 of its
 * event-loop delay since the last write to `<dir>/<pid>.json`, which the run's sampler reads. One way for the
 * services and the embedded crawl alike, and nothing in the crawler itself changes to be measured.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/** What a probe file holds. */
export interface ProbeReading {
  at: number;
  heapUsedBytes: number;
  /** p99 of the event-loop delay over the last probe interval, ms. */
  eventLoopP99Ms: number;
}

const dir = process.env.SCALE_PROBE_DIR;
if (dir && isMainThread) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const file = join(dir, `${process.pid}.json`);
  const write = () => {
    const reading: ProbeReading = { at: Date.now(), heapUsedBytes: process.memoryUsage().heapUsed, eventLoopP99Ms: delay.percentile(99) / 1e6 };
    delay.reset();
    try {
      writeFileSync(file, JSON.stringify(reading));
    } catch {
      // the run's directory is gone: the run is over
    }
  };
  setInterval(write, Number(process.env.SCALE_PROBE_MS || 5000)).unref();
}
