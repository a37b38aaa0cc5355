import type { FetchedPage } from '@crawler/contracts';
import { compiledWorkerScript, WorkerPool } from '@crawler/worker-pool';
import type { ParsePageOptions, ParseResult } from './parse-page';

/** What a parse thread is sent: the page's message and its body. */
export interface ParseCall {
  fetched: FetchedPage;
  body: Buffer;
}

/**
 * Parsing in worker threads, so that a process with spare cores parses on them while its event loop
 * fetches, stores and routes (the embedded crawl: one process, every stage). A page's body is copied, not
 * moved (the staged body stays readable).
 */
export class ParseThreads {
  private readonly pool: WorkerPool<ParseCall, ParseResult>;

  constructor(size: number, options: ParsePageOptions) {
    this.pool = new WorkerPool('parse', compiledWorkerScript(__dirname, 'parse.worker.js'), size, options);
  }

  parse(fetched: FetchedPage, body: Buffer): Promise<ParseResult> {
    return this.pool.run({ fetched, body });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
