import { bitsAt, popcount32, simhashHalves } from '@crawler/simhash';

/**
 * The banded layout of the near-duplicate index (Manku et al.), shared by the drivers that keep it themselves
 * (memory, PostgreSQL; the Redis driver keeps SimhashIndex's own keys). Pigeonhole: two simhashes at most d
 * bits apart agree on at least one of d + 1 bands of ⌊64 / (d + 1)⌋ bits, so a simhash is filed under each of
 * its band values and a lookup reads the d + 1 buckets of its own.
 */
export interface SimhashLayout {
  maxDistance: number;
  bands: number;
  bandBits: number;
}

export function simhashLayout(maxDistance: number): SimhashLayout {
  if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > 15) {
    throw new RangeError(`near-duplicate maxDistance must be an integer in [0, 15], got ${maxDistance}`);
  }
  return { maxDistance, bands: maxDistance + 1, bandBits: Math.floor(64 / (maxDistance + 1)) };
}

/**
 * A simhash's bucket in each band: [band id, value]. The band id names the layout too (bands × 16 + band), so
 * another distance is another, empty, index. The value is the band's first 32 bits at most (a band of 64 or 32
 * bits, at distance 0 or 1), as a signed 32-bit integer: agreeing on a whole band means agreeing on its start,
 * and the distance to every candidate is measured anyway.
 */
export function simhashBuckets(layout: SimhashLayout, simhash: string): [band: number, value: number][] {
  const [hi, lo] = simhashHalves(simhash);
  const width = Math.min(32, layout.bandBits);
  return Array.from({ length: layout.bands }, (_, band) => [layout.bands * 16 + band, bitsAt(hi, lo, band * layout.bandBits, width) | 0]);
}

/** A simhash as the signed 64-bit integer with its bits, in decimal (a PostgreSQL bigint). */
export function simhashToSigned(simhash: string): string {
  return BigInt.asIntN(64, BigInt(`0x${simhash}`)).toString();
}

export function signedToSimhash(value: string): string {
  return BigInt.asUintN(64, BigInt(value)).toString(16).padStart(16, '0');
}

function simhashDistance(a: string, b: string): number {
  const [ahi, alo] = simhashHalves(a);
  const [bhi, blo] = simhashHalves(b);
  return popcount32(ahi ^ bhi) + popcount32(alo ^ blo);
}

/** Of the candidates within maxDistance, the nearest; among equals the smallest value, so every driver answers alike. */
export function nearest<T extends { simhash: string }>(simhash: string, maxDistance: number, candidates: Iterable<T>): (T & { distance: number }) | null {
  let best: (T & { distance: number }) | null = null;
  for (const candidate of candidates) {
    const distance = simhashDistance(simhash, candidate.simhash);
    if (distance > maxDistance) continue;
    if (!best || distance < best.distance || (distance === best.distance && candidate.simhash < best.simhash)) best = { ...candidate, distance };
  }
  return best;
}
