import { toHex } from '@crawler/simhash';
import { SimhashBandIndex } from './simhash-band-index';
import { nearest, simhashBuckets, simhashLayout } from './simhash-bands';

describe('SimhashBandIndex', () => {
  /** The answer of the exact index: buckets of band values, as the memory driver files them. */
  function exactNearest(indexed: string[], simhash: string, maxDistance: number) {
    const layout = simhashLayout(maxDistance);
    const mine = new Set(simhashBuckets(layout, simhash).map(([band, value]) => `${band}:${value}`));
    const candidates = indexed.filter((s) => simhashBuckets(layout, s).some(([band, value]) => mine.has(`${band}:${value}`)));
    return nearest(
      simhash,
      maxDistance,
      candidates.map((s) => ({ simhash: s })),
    );
  }

  it.each([0, 1, 2, 3, 7, 15])('finds what the exact buckets find at distance %i (bands wider than 16 bits share buckets)', (maxDistance) => {
    let seed = 12345 + maxDistance;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const indexed = Array.from({ length: 3000 }, () => toHex(random(), random()));
    const index = new SimhashBandIndex(simhashLayout(maxDistance));
    for (const simhash of indexed) index.add(simhash);
    // Near ones: an indexed simhash with a few bits flipped; far ones: fresh random values.
    const asked = indexed.slice(0, 300).map((s, i) => toHex(parseInt(s.slice(0, 8), 16) ^ (1 << (i % 32)) ^ (i % 3 ? 1 << ((i * 7) % 32) : 0), parseInt(s.slice(8), 16)));
    for (let i = 0; i < 300; i++) asked.push(toHex(random(), random()));
    for (const simhash of asked) expect(nearest(simhash, maxDistance, index.candidates(simhash))).toEqual(exactNearest(indexed, simhash, maxDistance));
  });
});
