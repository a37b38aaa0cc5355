import { httpFreshness } from './http-freshness';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const inAnHour = new Date(NOW + 3_600_000).toUTCString();

describe('httpFreshness', () => {
  it('takes a future Expires as the end of the lifetime, and a past or broken one as none', () => {
    expect(httpFreshness({ expires: inAnHour }, NOW)).toEqual({ freshUntil: NOW + 3_600_000, noStore: false });
    expect(httpFreshness({ expires: new Date(NOW - 1000).toUTCString() }, NOW)).toEqual({ noStore: false });
    expect(httpFreshness({ expires: '0' }, NOW)).toEqual({ noStore: false });
  });

  it('takes max-age over Expires, less the Age the response already has', () => {
    expect(httpFreshness({ 'cache-control': 'public, max-age=600', expires: inAnHour }, NOW)).toEqual({ freshUntil: NOW + 600_000, noStore: false });
    expect(httpFreshness({ 'cache-control': 'max-age="600"', age: '100' }, NOW)).toEqual({ freshUntil: NOW + 500_000, noStore: false });
    // max-age=0 (or an Age past it) is stale at once, whatever Expires says.
    expect(httpFreshness({ 'cache-control': 'max-age=0', expires: inAnHour }, NOW)).toEqual({ noStore: false });
    expect(httpFreshness({ 'cache-control': 'max-age=60', age: '90' }, NOW)).toEqual({ noStore: false });
    // A malformed max-age is no max-age: Expires then counts.
    expect(httpFreshness({ 'cache-control': 'max-age=soon', expires: inAnHour }, NOW)).toEqual({ freshUntil: NOW + 3_600_000, noStore: false });
  });

  it('gives no lifetime with no-cache, and keeps nothing with no-store', () => {
    expect(httpFreshness({ 'cache-control': 'no-cache, max-age=600', expires: inAnHour }, NOW)).toEqual({ noStore: false });
    expect(httpFreshness({ 'cache-control': 'Max-Age=600, No-Store', expires: inAnHour }, NOW)).toEqual({ noStore: true });
  });

  it('reads nothing into a response without caching headers, nor into s-maxage or private', () => {
    expect(httpFreshness({}, NOW)).toEqual({ noStore: false });
    expect(httpFreshness({ 'cache-control': 's-maxage=600, private' }, NOW)).toEqual({ noStore: false });
  });
});
