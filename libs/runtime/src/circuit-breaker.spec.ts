import { CircuitBreaker } from './circuit-breaker';

describe('CircuitBreaker', () => {
  let t = 0;
  const breaker = () => new CircuitBreaker({ threshold: 3, windowMs: 1000, cooldownMs: 5000 });

  beforeEach(() => {
    t = 0;
    jest.spyOn(Date, 'now').mockImplementation(() => t);
  });
  afterEach(() => jest.restoreAllMocks());

  it('opens on a burst of failures within the window, not on scattered ones', () => {
    const scattered = breaker();
    for (let i = 0; i < 10; i++) {
      t += 600;
      expect(scattered.failure()).toBe(false);
    }
    const burst = breaker();
    expect([burst.failure(), burst.failure(), burst.failure()]).toEqual([false, false, true]);
    expect(burst.isOpen).toBe(true);
  });

  it('closes after the cool-down, and waiting callers resume', async () => {
    const b = breaker();
    b.failure();
    b.failure();
    b.failure();
    const slept: number[] = [];
    await b.whenClosed(async (ms) => {
      slept.push(ms);
      t += ms;
    });
    expect(slept).toEqual([5000]);
    expect(b.isOpen).toBe(false);
  });
});
