/**
 * Key rules shared by every driver, so a key accepted by one store is accepted by all (and a key that is
 * safe for S3 is also safe as a file path: no traversal, no absolute paths, no odd characters).
 */
const SEGMENT = /^[A-Za-z0-9._-]+$/;
/** S3's limit on a key (all keys are ASCII, so characters = bytes). */
const MAX_KEY_LENGTH = 1024;
/** Most filesystems' limit on one path component. */
const MAX_SEGMENT_LENGTH = 255;

function segmentProblem(segment: string): string | null {
  if (segment === '') return 'has an empty segment (leading, trailing or doubled "/")';
  if (segment === '.' || segment === '..') return `has a "${segment}" segment`;
  if (!SEGMENT.test(segment)) return 'has characters outside [A-Za-z0-9._/-]';
  if (segment.length > MAX_SEGMENT_LENGTH) return `has a segment longer than ${MAX_SEGMENT_LENGTH}`;
  return null;
}

export function assertValidKey(key: string): void {
  if (typeof key !== 'string' || key === '') throw new Error('content store: key must be a non-empty string');
  if (key.length > MAX_KEY_LENGTH) throw new Error(`content store: key longer than ${MAX_KEY_LENGTH}: ${key.slice(0, 80)}…`);
  for (const segment of key.split('/')) {
    const problem = segmentProblem(segment);
    if (problem) throw new Error(`content store: invalid key ${JSON.stringify(key)}: ${problem}`);
  }
}

/**
 * A prefix is a string prefix of keys (S3 semantics: 'a/b' matches 'a/b/c' and 'a/bc'). Every segment but
 * the last must be a valid key segment; the last may be partial ('' or '.' included).
 */
export function assertValidPrefix(prefix: string): void {
  if (typeof prefix !== 'string') throw new Error('content store: prefix must be a string');
  if (prefix === '') return;
  const segments = prefix.split('/');
  const last = segments.pop() as string;
  const problem = segments.map(segmentProblem).find((p) => p !== null) ?? (/^[A-Za-z0-9._-]*$/.test(last) ? null : 'has characters outside [A-Za-z0-9._/-]');
  if (problem) throw new Error(`content store: invalid prefix ${JSON.stringify(prefix)}: ${problem}`);
}

/** Metadata keys must be non-empty (S3 cannot store an empty header name); values must be strings. */
export function assertValidMeta(meta: Record<string, string>): void {
  for (const [k, v] of Object.entries(meta)) {
    if (k === '') throw new Error('content store: metadata keys must be non-empty');
    if (typeof v !== 'string') throw new Error(`content store: metadata value for ${JSON.stringify(k)} is not a string`);
  }
}

/** A byte range: a non-negative integer offset and length. */
export function assertRange(offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new Error(`content store: invalid range offset ${offset}, length ${length}`);
  }
}
