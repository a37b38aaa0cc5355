/** A parse thread (see ParseThreads): parsePage for every call. */
import { workerData } from 'node:worker_threads';
import { serveWorkerCalls } from '@crawler/worker-pool';
import { parsePage, type ParsePageOptions, type ParseResult } from './parse-page';
import type { ParseCall } from './parse-threads';

const options = workerData as ParsePageOptions;

serveWorkerCalls<ParseCall, ParseResult>(({ fetched, body }) => ({
  result: parsePage(fetched, Buffer.from(body.buffer, body.byteOffset, body.byteLength), options),
}));
