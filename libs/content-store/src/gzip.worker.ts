/** A compression thread (see GzipThreads): gzip for every message, the answer tagged with its id. */
import { parentPort, workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';

const level = workerData as number;

parentPort!.on('message', ({ id, body }: { id: number; body: Uint8Array }) => {
  const gzipped = gzipSync(body, { level });
  parentPort!.postMessage({ id, gzipped }, [gzipped.buffer as ArrayBuffer]);
});
