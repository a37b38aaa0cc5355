export interface StoredObject {
  body: Buffer;
  meta: Record<string, string>;
}

/**
 * Blob storage for page bodies. Drivers: S3 through the `minio` client (MinIO or any S3 endpoint) and a
 * local directory (embedded mode). Keys are '/'-separated paths of [A-Za-z0-9._-] segments.
 */
export interface ContentStore {
  /** Writes (or overwrites) an object with string metadata. */
  put(key: string, body: Buffer, meta?: Record<string, string>): Promise<void>;
  /** The object, or null when the key does not exist. */
  get(key: string): Promise<StoredObject | null>;
  /** `length` bytes of the object from `offset` (fewer at its end), or null when the key does not exist. */
  getRange(key: string, offset: number, length: number): Promise<Buffer | null>;
  exists(key: string): Promise<boolean>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Every key under a prefix. */
  list(prefix: string): AsyncIterable<string>;
  /** Reachable and writable (readiness probe). */
  ping(): Promise<void>;
}

export const CONTENT_STORE = Symbol('CONTENT_STORE');
