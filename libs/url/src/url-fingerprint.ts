import { createHash } from 'node:crypto';

function sha256(url: string): Buffer {
  return createHash('sha256').update(url, 'utf8').digest();
}

/**
 * A stable, short id for a URL: base64url of the first 12 bytes (96 bits) of its SHA-256, 16 characters
 * from `[A-Za-z0-9_-]`. Safe as a BullMQ job id (no ':') and as a storage key. Pass the canonical URL:
 * different spellings of one URL get different fingerprints.
 *
 * 96 bits keep the birthday-collision odds around 1e-11 even at a billion URLs.
 */
export function urlFingerprint(url: string): string {
  return sha256(url).subarray(0, 12).toString('base64url');
}

/** The first 8 bytes of the URL's SHA-256 as an unsigned 64-bit integer (for compact sets and hashing). */
export function fingerprint64(url: string): bigint {
  return sha256(url).readBigUInt64BE(0);
}
