/**
 * Loaded into the crawl process by bench/embedded-memory.ts (`node --require`): appends the process's
 * memory as V8 sees it to MEMORY_PROBE_FILE every MEMORY_PROBE_MS (1000), one JSON line each, so the bench
 * can set the heap beside the RSS it reads from /proc. Not part of any crawl outside that bench.
 */
import { appendFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MEMORY_PROBE_FILE;
// The parse workers load this file too (execArgv is inherited): only the main thread's heap is the crawl's.
if (file && isMainThread) {
  const probe = () => {
    const heap = getHeapStatistics();
    const usage = process.memoryUsage();
    const line = {
      at: Date.now(),
      rss: usage.rss,
      heapUsed: heap.used_heap_size,
      heapTotal: heap.total_heap_size,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  setInterval(probe, Number(process.env.MEMORY_PROBE_MS || 1000)).unref();
}
