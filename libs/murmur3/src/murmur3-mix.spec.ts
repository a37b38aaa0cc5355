import { fmix32 } from './murmur3-mix';

describe('fmix32', () => {
  it('is the reference finaliser (fmix32(1) and fmix32(-1) are murmur3 of "" under seeds 1 and 2^32 − 1), as an int32', () => {
    expect(fmix32(0)).toBe(0);
    expect(fmix32(1) >>> 0).toBe(0x514e28b7);
    expect(fmix32(-1) >>> 0).toBe(0x81f16f39);
    expect(fmix32(0xdeadbeef | 0)).toBe(233162409);
    expect(fmix32(0x12345678)).toBe(-478359108);
  });
});
