import type { FetchRequest } from '@crawler/contracts';

/**
 * What a delivery of a fetch job got done before it failed, kept for the job's retry in this process, so that
 * the retry takes up where it stopped instead of requesting the page again. Each value is kept until a
 * deadline (its lease's end: past it, the frontier hands the URL out afresh) and at most `max` at once, the
 * oldest dropped first: as many as fetches may be in flight together, so it never holds more memory than
 * those fetches already did.
 */
export class KeptForRetry<T> {
  private readonly kept = new Map<string, { value: T; until: number }>();

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`KeptForRetry: max must be a positive integer, got ${max}`);
  }

  keep(key: string, value: T, until: number, now = Date.now()): void {
    this.kept.delete(key);
    for (const [k, entry] of this.kept) if (entry.until <= now) this.kept.delete(k);
    if (this.kept.size >= this.max) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(key, { value, until });
  }

  /** Whether `key` has a value kept and still due. */
  has(key: string, now = Date.now()): boolean {
    const entry = this.kept.get(key);
    return entry !== undefined && entry.until > now;
  }

  /** The value kept for `key` (it is no longer kept), or undefined when none is or its deadline passed. */
  take(key: string, now = Date.now()): T | undefined {
    const entry = this.kept.get(key);
    if (!entry) return undefined;
    this.kept.delete(key);
    return entry.until > now ? entry.value : undefined;
  }

  get size(): number {
    return this.kept.size;
  }
}

/** When a request's lease ends: past it, the frontier hands the URL out again and what was kept is stale. */
export function leaseEnd(request: FetchRequest, leaseMs: number, now = Date.now()): number {
  return request.leaseExpiresAt ?? now + leaseMs;
}
