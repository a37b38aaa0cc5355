import { estimatedFalsePositiveRate, estimatedItems } from './bloom-estimates';

describe('Bloom filter estimates', () => {
  it('false-positive rate is the fill ratio to the power k', () => {
    expect(estimatedFalsePositiveRate(0, 100, 3)).toBe(0);
    expect(estimatedFalsePositiveRate(50, 100, 2)).toBe(0.25);
    expect(estimatedFalsePositiveRate(100, 100, 7)).toBe(1);
  });

  it('item count inverts the expected fill of a filter', () => {
    const [m, k] = [9_585_059, 7];
    expect(estimatedItems(0, m, k)).toBe(0);
    for (const n of [1, 1000, 1e6, 3e6]) {
      const expectedBitsSet = m * (1 - Math.exp((-k * n) / m));
      expect(estimatedItems(expectedBitsSet, m, k) / n).toBeCloseTo(1, 9);
    }
    expect(estimatedItems(m, m, k)).toBe(Infinity); // saturated
  });

  it('rejects impossible counts', () => {
    expect(() => estimatedItems(-1, 100, 3)).toThrow(RangeError);
    expect(() => estimatedItems(101, 100, 3)).toThrow(RangeError);
    expect(() => estimatedFalsePositiveRate(1, 0, 3)).toThrow(RangeError);
    expect(() => estimatedFalsePositiveRate(1, 100, 0)).toThrow(RangeError);
    expect(() => estimatedFalsePositiveRate(NaN, 100, 3)).toThrow(RangeError);
  });
});
