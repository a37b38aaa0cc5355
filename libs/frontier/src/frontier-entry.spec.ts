import { decodeEntry, encodeEntry } from './frontier-entry';

describe('frontier entries', () => {
  it('round-trip, short when nothing optional is set', () => {
    const plain = { url: 'https://a.test/x', depth: 2, source: 'link' as const, hops: 0 };
    expect(encodeEntry(plain)).toBe('["https://a.test/x",2,1,0]');
    expect(decodeEntry(encodeEntry(plain))).toEqual(plain);
  });

  it('round-trip with attempts, sitemap priority and revisit state', () => {
    const full = {
      url: 'https://a.test/y',
      depth: 1,
      source: 'recrawl' as const,
      hops: 0,
      attempts: 2,
      priority: 0.8,
      revisit: { etag: '"abc"', lastModified: 'Wed, 01 Jan 2025 00:00:00 GMT', bodyHash: 'ff', intervalMs: 3600000 },
    };
    expect(decodeEntry(encodeEntry(full))).toEqual(full);
    expect(decodeEntry(encodeEntry({ ...full, attempts: undefined, priority: undefined }))).toEqual({ ...full, attempts: undefined, priority: undefined });
  });
});
