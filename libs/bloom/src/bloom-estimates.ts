/**
 * Estimates from a filter's population count (X bits set of m, k hashes) — what a shared filter can report
 * without knowing how many items went in.
 */

/** Probability that an item never added is reported present: (X/m)^k. */
export function estimatedFalsePositiveRate(bitsSet: number, bits: number, hashes: number): number {
  validate(bitsSet, bits, hashes);
  return (bitsSet / bits) ** hashes;
}

/**
 * Items added so far (Swamidass & Baldi): −(m/k)·ln(1 − X/m). Infinity once every bit is set: a saturated
 * filter no longer says how full it is.
 */
export function estimatedItems(bitsSet: number, bits: number, hashes: number): number {
  validate(bitsSet, bits, hashes);
  if (bitsSet === bits) return Infinity;
  return (-bits / hashes) * Math.log1p(-bitsSet / bits); // log1p: exact for a nearly empty filter
}

function validate(bitsSet: number, bits: number, hashes: number): void {
  if (!(bits >= 1) || !(hashes >= 1)) {
    throw new RangeError(`Bloom filter bits and hashes must be ≥ 1, got bits=${bits}, hashes=${hashes}`);
  }
  if (!(bitsSet >= 0 && bitsSet <= bits)) {
    throw new RangeError(`bits set must be between 0 and ${bits}, got ${bitsSet}`);
  }
}
