/** A parse thread (see ParseThreads): parsePage for every message, the answer tagged with its id. */
import { parentPort, workerData } from 'node:worker_threads';
import type { FetchedPage } from '@crawler/contracts';
import { parsePage, type ParsePageOptions } from './parse-page';

const options = workerData as ParsePageOptions;

parentPort!.on('message', ({ id, fetched, body }: { id: number; fetched: FetchedPage; body: Uint8Array }) => {
  try {
    const result = parsePage(fetched, Buffer.from(body.buffer, body.byteOffset, body.byteLength), options);
    parentPort!.postMessage({ id, result });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
