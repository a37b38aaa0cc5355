/** A compression thread (see GzipThreads): gzip for every call, the result moved back, not copied. */
import { workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { serveWorkerCalls } from '@crawler/worker-pool';

const level = workerData as number;

serveWorkerCalls<Uint8Array, Uint8Array>((body) => {
  const gzipped = gzipSync(body, { level });
  return { result: gzipped, transfer: [gzipped.buffer as ArrayBuffer] };
});
