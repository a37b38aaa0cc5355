import { createHash } from 'node:crypto';

/**
 * SHA-256 (hex) of text normalised so that byte-level noise does not defeat exact-duplicate detection:
 * Unicode NFC (é precomposed or not), whitespace runs collapsed to one space, ends trimmed.
 */
export function contentHash(text: string): string {
  const normalised = text.normalize('NFC').replace(/\s+/g, ' ').trim();
  return createHash('sha256').update(normalised, 'utf8').digest('hex');
}
