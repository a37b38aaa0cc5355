import { RecentUrls } from './recent-urls';

const url = (i: number) => `https://site-${i % 97}.example/page/${i}?q=${i * 7}`;

describe('RecentUrls', () => {
  it('remembers what it was given and nothing else', () => {
    const recent = new RecentUrls(1000);
    expect(recent.has('https://a.example/')).toBe(false);
    expect(recent.add('https://a.example/')).toBe(true);
    expect(recent.add('https://a.example/')).toBe(false);
    expect(recent.has('https://a.example/')).toBe(true);
    expect(recent.has('https://a.example')).toBe(false);
    expect(recent.has('https://A.example/')).toBe(false);
    expect(recent.has('')).toBe(false);
    recent.add('');
    expect(recent.has('')).toBe(true);
  });

  it('holds at least the last limit / 2 URLs and at most limit, forgetting the oldest', () => {
    const limit = 10_000;
    const recent = new RecentUrls(limit);
    for (let i = 0; i < 3 * limit; i++) recent.add(url(i));
    const last = 3 * limit - 1;
    for (let i = last; i > last - limit / 2; i--) expect(recent.has(url(i))).toBe(true);
    let remembered = 0;
    for (let i = 0; i < 3 * limit; i++) if (recent.has(url(i))) remembered++;
    expect(remembered).toBeGreaterThanOrEqual(limit / 2);
    expect(remembered).toBeLessThanOrEqual(limit);
    expect(recent.has(url(0))).toBe(false);
  });

  it('takes no URL it was not given for one it was (no false positive in 200k lookups)', () => {
    const recent = new RecentUrls(200_000);
    for (let i = 0; i < 100_000; i++) recent.add(url(i));
    let wrong = 0;
    for (let i = 100_000; i < 300_000; i++) if (recent.has(url(i))) wrong++;
    expect(wrong).toBe(0);
  });

  it('with a limit of 0 remembers nothing', () => {
    const recent = new RecentUrls(0);
    expect(recent.add('https://a.example/')).toBe(true);
    expect(recent.has('https://a.example/')).toBe(false);
  });
});
