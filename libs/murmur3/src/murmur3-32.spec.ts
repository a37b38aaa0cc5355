import { murmur3_32 } from './murmur3-32';

describe('murmur3_32', () => {
  it('matches the reference MurmurHash3_x86_32 test vectors', () => {
    const vectors: Array<[string, number, number]> = [
      ['', 0, 0x00000000],
      ['', 1, 0x514e28b7],
      ['', 0xffffffff, 0x81f16f39],
      ['abc', 0, 0xb3dd93fa],
      ['aaaa', 0x9747b28c, 0x5a97808a],
      ['test', 0, 0xba6bd213],
      ['Hello, world!', 0, 0xc0363e43],
      ['Hello, world!', 1234, 0xfaf6cdb3],
      ['The quick brown fox jumps over the lazy dog', 0, 0x2e4ff723],
    ];
    for (const [text, seed, expected] of vectors) {
      expect([text, seed, murmur3_32(text, seed)]).toEqual([text, seed, expected]);
      expect(murmur3_32(Buffer.from(text, 'utf8'), seed)).toBe(expected);
    }
  });

  it('hashes a string as its UTF-8 bytes, lone surrogates as U+FFFD like TextEncoder', () => {
    const encoder = new TextEncoder();
    let s = 12345;
    const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), s >>> 0);
    const samples = ['ünïcødé ✓', '日本語.example', '😀.test', '\ud800', 'a\udc00b', '\ud83d\ude00\ud83d', 'x'.repeat(1000)];
    for (let i = 0; i < 2000; i++) {
      samples.push(String.fromCharCode(...Array.from({ length: i % 13 }, () => next() & 0xffff)));
    }
    for (const text of samples) expect(murmur3_32(text)).toBe(murmur3_32(encoder.encode(text)));
  });

  it('answers an unsigned 32-bit integer', () => {
    for (let i = 0; i < 1000; i++) {
      const h = murmur3_32(`site-${i}.test`);
      expect(Number.isInteger(h) && h >= 0 && h <= 0xffffffff).toBe(true);
    }
  });
});
