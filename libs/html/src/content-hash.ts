import { hash } from 'node:crypto';
import { collapseWhitespace } from './whitespace';

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * SHA-256 (hex) of text normalised so that byte-level noise does not defeat exact-duplicate detection:
 * Unicode NFC (é precomposed or not), whitespace runs collapsed to one space, ends trimmed. `collapsed`:
 * the caller already collapsed the whitespace (NFC never creates a run: it changes no character's class).
 */
export function contentHash(text: string, options: { collapsed?: boolean } = {}): string {
  const nfc = NON_ASCII.test(text) ? text.normalize('NFC') : text;
  return hash('sha256', options.collapsed ? nfc : collapseWhitespace(nfc), 'hex');
}
