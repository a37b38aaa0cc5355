import type { Compressed } from './codec';

/**
 * The claim check between the downloader and the stages after it: a fetched body is staged, its reference
 * travels in the queue message (never the body), readers read it by reference, and the last one releases it.
 *
 * Drivers: in memory (the embedded crawl, where nothing outlives the process anyway), and bundled on a
 * content store (S3, or a directory with `crawl --redis`): bodies staged together within a few milliseconds
 * are compressed one by one (gzip or zstd) and written as ONE object, so a page costs a fraction of a write and
 * a read instead of one of each; the bundle is deleted when its last body is released.
 */
export interface StagedBody {
  /** The body as fetched (transfer and content encodings already decoded). */
  body: Buffer;
  /**
   * The body compressed, as stored pages are kept: by the codec of its bundle (which may be the codec before a
   * switch), or by the process's codec on demand (memory).
   */
  compressed(): Promise<Compressed>;
}

export interface BodyStaging {
  /** Stages a body; resolves, once it is as durable as the driver makes it, to the reference to send on. */
  stage(body: Buffer): Promise<string>;
  /** The staged body, or null once it was released (a redelivered message of work already finished). */
  read(ref: string): Promise<StagedBody | null>;
  /** This body is done with. Releasing twice, or a reference already gone, is harmless. */
  release(ref: string): Promise<void>;
  /** Writes what is still pending, then stops. */
  close(): Promise<void>;
}

export const BODY_STAGING = Symbol('BODY_STAGING');
