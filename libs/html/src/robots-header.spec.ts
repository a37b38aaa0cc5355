import { parseRobotsDirectives, parseXRobotsTag } from './robots-header';

const none = { noindex: false, nofollow: false };

describe('parseXRobotsTag', () => {
  it('reads unscoped directives, case-insensitively', () => {
    expect(parseXRobotsTag(undefined)).toEqual(none);
    expect(parseXRobotsTag('')).toEqual(none);
    expect(parseXRobotsTag('NoIndex')).toEqual({ noindex: true, nofollow: false });
    expect(parseXRobotsTag('noindex, nofollow')).toEqual({ noindex: true, nofollow: true });
    expect(parseXRobotsTag('none')).toEqual({ noindex: true, nofollow: true });
    expect(parseXRobotsTag('all, noarchive, nosnippet')).toEqual(none);
  });

  it('does not mistake valued directives for user-agent scopes', () => {
    expect(parseXRobotsTag('max-snippet: 20, noindex')).toEqual({ noindex: true, nofollow: false });
    expect(parseXRobotsTag('unavailable_after: Friday, 25-Jun-10 15:00:00 PST, nofollow')).toEqual({
      noindex: false,
      nofollow: true,
    });
  });

  it('ignores directives scoped to other crawlers', () => {
    expect(parseXRobotsTag('googlebot: noindex')).toEqual(none);
    expect(parseXRobotsTag('googlebot: noindex, nofollow')).toEqual(none); // nofollow stays in googlebot's scope
    expect(parseXRobotsTag('nofollow, bingbot: noindex')).toEqual({ noindex: false, nofollow: true });
  });

  it('obeys directives scoped to * or to our own product token', () => {
    expect(parseXRobotsTag('*: noindex')).toEqual({ noindex: true, nofollow: false });
    expect(parseXRobotsTag('googlebot: noindex, PoliteCrawler: nofollow', 'politecrawler')).toEqual({
      noindex: false,
      nofollow: true,
    });
    expect(parseXRobotsTag('politecrawler: none', 'PoliteCrawler')).toEqual({ noindex: true, nofollow: true });
  });
});

describe('parseRobotsDirectives', () => {
  it('splits on commas and spaces', () => {
    expect(parseRobotsDirectives(' NOINDEX ,follow')).toEqual({ noindex: true, nofollow: false });
    expect(parseRobotsDirectives('noindex nofollow')).toEqual({ noindex: true, nofollow: true });
    expect(parseRobotsDirectives('nonefollow, indexnofollow')).toEqual(none);
  });
});
