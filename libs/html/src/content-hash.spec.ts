import { createHash } from 'node:crypto';
import { contentHash } from './content-hash';

describe('contentHash', () => {
  it('is the SHA-256 hex of the normalised text', () => {
    expect(contentHash('hello world')).toBe(createHash('sha256').update('hello world').digest('hex'));
    expect(contentHash('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(contentHash('x')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores whitespace differences and Unicode composition', () => {
    const base = contentHash('Café au lait');
    expect(contentHash('  Café\n\tau   lait \r\n')).toBe(base);
    expect(contentHash('Cafe\u0301 au lait')).toBe(base); // e + combining acute (NFD) → é (NFC)
    expect(contentHash('Café au lait!')).not.toBe(base);
    expect(contentHash('café au lait')).not.toBe(base); // case is content
  });
});
