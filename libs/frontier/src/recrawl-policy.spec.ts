import { recrawlInterval } from './recrawl-policy';

const bounds = { initialMs: 1000, minMs: 100, maxMs: 8000 };

describe('recrawlInterval', () => {
  it('starts at the initial interval, whatever the page did', () => {
    expect(recrawlInterval({ changed: true, newLinks: 5 }, bounds)).toBe(1000);
  });

  it('adaptive (no count of new links): halves when the page changed, doubles when it did not', () => {
    expect(recrawlInterval({ previousMs: 1000, changed: true }, bounds)).toBe(500);
    expect(recrawlInterval({ previousMs: 1000, changed: false }, bounds)).toBe(2000);
  });

  it('hubs: halves when the page yielded new URLs, even unchanged by its hash', () => {
    expect(recrawlInterval({ previousMs: 1000, changed: true, newLinks: 3 }, bounds)).toBe(500);
    expect(recrawlInterval({ previousMs: 1000, changed: false, newLinks: 1 }, bounds)).toBe(500);
  });

  it('hubs: a page that changed without new links is a leaf, its interval doubles', () => {
    expect(recrawlInterval({ previousMs: 1000, changed: true, newLinks: 0 }, bounds)).toBe(2000);
  });

  it('stays within [min, max]', () => {
    expect(recrawlInterval({ previousMs: 150, changed: true, newLinks: 9 }, bounds)).toBe(100);
    expect(recrawlInterval({ previousMs: 6000, changed: true, newLinks: 0 }, bounds)).toBe(8000);
  });
});
