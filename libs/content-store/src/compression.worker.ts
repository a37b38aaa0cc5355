/** A compression thread (see CompressionThreads): one codec for every call, the result moved back, not copied twice. */
import { workerData } from 'node:worker_threads';
import { serveWorkerCalls } from '@crawler/worker-pool';
import { type Compression, compressSync } from './codec';

const compression = workerData as Compression;

serveWorkerCalls<Uint8Array, Uint8Array>((body) => {
  // zlib's synchronous result is a view into a larger buffer, which Node 22 and later refuse to transfer (it
  // may be pooled) and which would carry tens of kilobytes of slack if they did: the compressed bytes are
  // copied once into a buffer of their own, which is moved.
  const compressed = new Uint8Array(compressSync(body, compression));
  return { result: compressed, transfer: [compressed.buffer] };
});
