import { KeptForRetry } from './kept-for-retry';

describe('KeptForRetry', () => {
  it('hands a kept value to the first take only', () => {
    const kept = new KeptForRetry<string>(4);
    kept.keep('l1', 'answer', 2000, 1000);
    expect(kept.has('l1', 1500)).toBe(true);
    expect(kept.take('l1', 1500)).toBe('answer');
    expect(kept.take('l1', 1500)).toBeUndefined();
    expect(kept.has('l1', 1500)).toBe(false);
  });

  it('forgets a value past its deadline (the lease is over: the URL is handed out again)', () => {
    const kept = new KeptForRetry<string>(4);
    kept.keep('l1', 'answer', 2000, 1000);
    expect(kept.has('l1', 2000)).toBe(false);
    expect(kept.take('l1', 2000)).toBeUndefined();
    expect(kept.size).toBe(0);
  });

  it('holds at most `max` values, dropping the oldest, and sweeps the expired on each keep', () => {
    const kept = new KeptForRetry<number>(2);
    kept.keep('a', 1, 5000, 0);
    kept.keep('b', 2, 5000, 0);
    kept.keep('c', 3, 5000, 0);
    expect([kept.has('a', 0), kept.has('b', 0), kept.has('c', 0)]).toEqual([false, true, true]);
    kept.keep('d', 4, 9000, 6000);
    expect(kept.size).toBe(1);
    expect(kept.take('d', 6000)).toBe(4);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new KeptForRetry(0)).toThrow('max must be a positive integer');
  });
});
