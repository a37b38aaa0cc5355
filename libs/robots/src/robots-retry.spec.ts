import { nextRobotsTry } from './robots-retry';

const settings = { retryMs: 60_000, maxWaitMs: 600_000, giveUpAfterMs: 1_800_000 };
const noJitter = () => 0.5;

describe('nextRobotsTry', () => {
  it('backs off exponentially from the first failure, up to the longest wait', () => {
    let previous = null;
    const waits: number[] = [];
    let now = 0;
    for (let i = 0; i < 6; i++) {
      const next = nextRobotsTry(previous, now, undefined, settings, noJitter);
      waits.push(next.nextTryAt - now);
      previous = next;
      now = next.nextTryAt;
    }
    expect(waits).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 300_000]);
  });

  it('jitters each wait by at most a quarter either way', () => {
    expect(nextRobotsTry(null, 0, undefined, settings, () => 0).nextTryAt).toBe(45_000);
    expect(nextRobotsTry(null, 0, undefined, settings, () => 0.999999).nextTryAt).toBe(75_000);
  });

  it('is never sooner than Retry-After (capped at the longest wait), even when that is past the give-up time', () => {
    expect(nextRobotsTry(null, 0, 200_000, settings, noJitter).nextTryAt).toBe(200_000);
    expect(nextRobotsTry(null, 0, 5_000_000, settings, noJitter).nextTryAt).toBe(600_000);
    const late = nextRobotsTry({ since: 0, tries: 3 }, 1_700_000, 300_000, settings, noJitter);
    expect(late).toMatchObject({ nextTryAt: 2_000_000, giveUp: false });
  });

  it('puts the last try on the give-up time, and gives up on a failure at or after it', () => {
    expect(nextRobotsTry({ since: 0, tries: 4 }, 1_700_000, undefined, settings, noJitter)).toMatchObject({ nextTryAt: 1_800_000, giveUp: false });
    expect(nextRobotsTry({ since: 0, tries: 5 }, 1_800_000, undefined, settings, noJitter)).toMatchObject({ giveUp: true, tries: 6, giveUpAt: 1_800_000 });
  });
});
