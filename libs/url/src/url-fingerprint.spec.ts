import { createHash } from 'node:crypto';
import { fingerprint64, urlFingerprint } from './url-fingerprint';

describe('urlFingerprint', () => {
  it('is 16 characters of base64url, no ":"', () => {
    for (const url of ['http://example.com/', 'http://site-001.test:8080/a?b=c', 'https://xn--bcher-kva.example/ü']) {
      expect(urlFingerprint(url)).toMatch(/^[A-Za-z0-9_-]{16}$/);
    }
  });
  it('is stable and matches the first 12 bytes of SHA-256', () => {
    const url = 'http://example.com/';
    const expected = createHash('sha256').update(url).digest().subarray(0, 12).toString('base64url');
    expect(urlFingerprint(url)).toBe(expected);
    expect(urlFingerprint(url)).toBe(urlFingerprint(url));
  });
  it('differs for different URLs', () => {
    expect(urlFingerprint('http://example.com/a')).not.toBe(urlFingerprint('http://example.com/b'));
  });
});

describe('fingerprint64', () => {
  it('is the first 8 bytes of SHA-256 as an unsigned bigint', () => {
    const url = 'http://example.com/';
    const hex = createHash('sha256').update(url).digest('hex').slice(0, 16);
    expect(fingerprint64(url)).toBe(BigInt(`0x${hex}`));
    expect(fingerprint64(url) >= 0n && fingerprint64(url) < 2n ** 64n).toBe(true);
  });
});
