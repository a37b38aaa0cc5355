/** The highest bit a Redis string holds (512 MiB): every driver refuses an offset past it, as Redis does. */
const MAX_BIT_OFFSET = 2 ** 32 - 1;

export function assertBitOffset(offset: number): void {
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_BIT_OFFSET) throw new RangeError(`bit offset ${offset} is not an integer in [0, 2^32)`);
}
