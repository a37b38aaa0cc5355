import { loadConfig } from '@crawler/config';
import { MemoryStateStore } from '@crawler/state';
import { CookieJarService } from './cookie-jar.service';

const NOW = Date.UTC(2026, 0, 1);
const jar = (env: Record<string, string> = {}, state = new MemoryStateStore()) => new CookieJarService(state, loadConfig(env));
const url = (text: string) => new URL(text);

describe('CookieJarService', () => {
  it('sends a site its own cookies only: one jar per registrable site', async () => {
    const cookies = jar();
    expect(await cookies.remember(url('http://www.example.com/'), ['a=1; Domain=example.com', 'b=2', 'c=3; Domain=example.org'], NOW)).toEqual({
      stored: 2,
      deleted: 0,
      refused: 1,
    });
    expect(await cookies.header(url('http://docs.example.com/x'), undefined, NOW)).toBe('a=1');
    expect(await cookies.header(url('http://www.example.com/x'), undefined, NOW)).toBe('a=1; b=2');
    expect(await cookies.header(url('http://example.org/'), undefined, NOW)).toBeUndefined();
    expect(await cookies.header(url('http://www.example.com.evil.test/'), undefined, NOW)).toBeUndefined();
  });

  it('is shared by every replica on one store, and forgets a cookie at its expiry or when the site deletes it', async () => {
    const state = new MemoryStateStore();
    const [one, two] = [jar({}, state), jar({}, state)];
    await one.remember(url('https://shop.test/login'), ['sid=1; Path=/; Secure; Max-Age=60', 'pref=x; Path=/'], NOW);
    expect(await two.header(url('https://shop.test/cart'), undefined, NOW)).toBe('sid=1; pref=x');
    expect(await two.header(url('http://shop.test/cart'), undefined, NOW)).toBe('pref=x');
    expect(await two.header(url('https://shop.test/cart'), undefined, NOW + 61_000)).toBe('pref=x');
    expect(await two.remember(url('https://shop.test/'), ['pref=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT'], NOW)).toMatchObject({ deleted: 1 });
    expect(await one.header(url('https://shop.test/'), undefined, NOW)).toBeUndefined();
    expect(await state.namespace('cookies').hashGetAll('site:shop.test')).toEqual({});
  });

  it('keeps 50 cookies a site: a new one past that is refused, the ones kept still replaced', async () => {
    const cookies = jar();
    const many = Array.from({ length: 60 }, (_, i) => `c${i}=${i}`);
    expect(await cookies.remember(url('http://big.test/'), many, NOW)).toEqual({ stored: 50, deleted: 0, refused: 10 });
    expect(await cookies.remember(url('http://big.test/'), ['c0=new', 'c55=no'], NOW)).toEqual({ stored: 1, deleted: 0, refused: 1 });
    expect(await cookies.header(url('http://big.test/'), undefined, NOW)).toMatch(/^c0=new; c1=1; .*; c49=49$/);
  });

  it('sends the seeded cookies that match the URL, and only those with DOWNLOADER_COOKIES=false', async () => {
    const seeds = [
      { name: 'sid', value: 's' },
      { name: 'docs', value: 'd', path: '/docs' },
      { name: 'safe', value: 'x', secure: true },
      { name: 'old', value: 'o', expires: '2020-01-01T00:00:00Z' },
      { name: 'sub', value: 'u', domain: 'api.example.com' },
    ];
    const off = jar({ DOWNLOADER_COOKIES: 'false' });
    expect(await off.remember(url('http://www.example.com/'), ['sid=site'], NOW)).toEqual({ stored: 0, deleted: 0, refused: 0 });
    expect(await off.header(url('http://www.example.com/docs/a'), seeds, NOW)).toBe('docs=d; sid=s');
    expect(await off.header(url('https://v1.api.example.com/'), seeds, NOW)).toBe('sid=s; safe=x; sub=u');
  });
});
