import { nextProbeSize, regexHazard } from './regex-guard';

const hazard = (pattern: string, maxLength = 2048) => regexHazard(pattern, new RegExp(pattern), maxLength);

describe('regexHazard', () => {
  it('refuses the exponential shapes by their shape, before running them, with their position', () => {
    expect(hazard('x(a+)+$')).toBe('a repeated group that itself repeats (nested quantifiers) at position 2 of the expression: catastrophic backtracking');
    expect(hazard('((ab)*c)*$')).toContain('at position 1');
    expect(hazard('(?<w>\\w+)-\\k<w>')).toBe('a back-reference at position 11 of the expression');
  });

  it('refuses a polynomial blow-up by its time on a hostile input, found while the input grows', () => {
    const started = Date.now();
    expect(hazard('.*a.*a.*a.*a.*a.*b')).toMatch(/^takes \d+ ms on \d+ characters of "a" \(over 50 ms\): catastrophic backtracking$/);
    // Caught while the input is still small: the check ends quickly.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('grows its hostile inputs by a quarter at most past 32 characters, so that a blow-up is caught at a few times its budget', () => {
    let size = 32;
    for (let step = 0; step < 20; step++) {
      const next = nextProbeSize(size);
      expect(next).toBeGreaterThan(size);
      expect(next / size).toBeLessThanOrEqual(1.25 + 1 / size);
      size = next;
    }
  });

  it('lets through what a crawl writes: classes, alternations, bounded repeats, quantifiers in a class', () => {
    for (const ok of ['[?&](sort|order)=', '^/(en|de|fr)/', '\\.(pdf|zip)$', '/page/[0-9]{3,}', '^/[a-z+*]+/(?:x|y)?$', '(ab){2}c+']) {
      expect(hazard(ok)).toBeUndefined();
    }
  });
});
