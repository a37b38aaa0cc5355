import { murmur3_32 } from './murmur3-32';
import { murmur3x4 } from './murmur3x4';

describe('murmur3x4', () => {
  it('hashes with MurmurHash3_x86_32 over UTF-16LE (the reference vectors)', () => {
    // '' under seeds 0, 1 and 2^32 − 1: Appleby's SMHasher verification values.
    expect(murmur3x4('', [0, 1, -1, 0])).toEqual([0, 0x514e28b7, 0x81f16f39, 0]);
    // "hello" as UTF-16LE bytes (68 00 65 00 …), from an independent Python implementation.
    expect(murmur3x4('hello', [0, 1, 0, 1])).toEqual([3619887497, 2474293433, 3619887497, 2474293433]);
    // An odd length (the 2-byte tail), non-ASCII, an astral character and negative seeds, each lane equal to
    // the byte-wise MurmurHash3_x86_32 (checked against the reference vectors) of Buffer.from(text, 'utf16le').
    expect(murmur3x4('a', [0, 1, 2, 3])).toEqual([1867108634, 3484942910, 1485495528, 1009084850]);
    expect(murmur3x4('héllo wörld', [0x2545f491, 0x6c8e9cf5, 0x1b873593, 0x5bd1e995])).toEqual([795331741, 4177562983, 313960785, 1560316917]);
    expect(murmur3x4('a😀b', [7, -1640531522, -2048144788, -1028477390])).toEqual([746142463, 291198783, 2659956723, 98003242]);
    expect(murmur3x4('https://example.com/path?q=1', [-1, 0, 42, 0x7fffffff])).toEqual([4115743049, 3291518825, 2527564081, 3508744880]);
  });

  it("answers, lane by lane, murmur3_32 of the UTF-16LE bytes under that lane's seed", () => {
    let s = 88172645;
    const next = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), s >>> 0);
    for (let i = 0; i < 2000; i++) {
      const text = String.fromCharCode(...Array.from({ length: i % 29 }, () => next() & (i % 2 ? 0x7f : 0xffff)));
      const seeds: [number, number, number, number] = [next() | 0, next() | 0, next() | 0, next() | 0];
      const bytes = Buffer.from(text, 'utf16le');
      expect(murmur3x4(text, seeds)).toEqual(seeds.map((seed) => murmur3_32(bytes, seed >>> 0)));
    }
  });
});
