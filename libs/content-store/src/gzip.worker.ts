/** A compression thread (see GzipThreads): gzip for every call, the result moved back, not copied twice. */
import { workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { serveWorkerCalls } from '@crawler/worker-pool';

const level = workerData as number;

serveWorkerCalls<Uint8Array, Uint8Array>((body) => {
  // gzipSync's result is a view into a larger buffer, which Node 22 and later refuse to transfer (it may be
  // pooled) and which would carry tens of kilobytes of slack if they did: the compressed bytes are copied
  // once into a buffer of their own, which is moved.
  const gzipped = new Uint8Array(gzipSync(body, { level }));
  return { result: gzipped, transfer: [gzipped.buffer] };
});
