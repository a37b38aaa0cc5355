import type { FetchedPage, RecordsStore } from './records-store';

/**
 * The behaviour every RecordsStore driver must share, registered as jest tests. `make` builds a fresh, empty
 * store per test; after each test it is closed, then `cleanup` runs (drops what the test created). `make(crawl)`
 * builds, on the same server as the test's store, the store of another crawl: the one a process given
 * CRAWLER_PREFIX=`crawl` would open there (`crawl` holds upper-case letters and a `-`, as a prefix may).
 */
export function recordsStoreContract(name: string, make: (crawl?: string) => Promise<RecordsStore>, cleanup?: () => Promise<void>): void {
  describe(`RecordsStore contract: ${name}`, () => {
    let store: RecordsStore;

    beforeEach(async () => {
      store = await make();
    });

    afterEach(async () => {
      await store.close();
      await cleanup?.();
    });

    const page = (url: string, contentHash: string, fetchedAt: string, extra: Partial<FetchedPage> = {}): FetchedPage => ({
      url,
      fetchedAt,
      status: 200,
      contentKey: `seg-1#${contentHash}`,
      contentHash,
      ...extra,
    });

    describe('pages', () => {
      it('records a batch of pages and looks them up in the order asked, null where nothing is recorded', async () => {
        await store.recordPages([
          page('http://a.test/', 'h-a', '2026-01-01T00:00:00.000Z', { simhash: '00ff', etag: '"v1"', lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT' }),
          page('http://b.test/', 'h-b', '2026-01-01T00:00:01.000Z', { status: 203 }),
        ]);
        const [b, missing, a] = await store.lookup(['http://b.test/', 'http://none.test/', 'http://a.test/']);
        expect(a).toEqual({
          page: {
            url: 'http://a.test/',
            fetchedAt: '2026-01-01T00:00:00.000Z',
            status: 200,
            contentKey: 'seg-1#h-a',
            contentHash: 'h-a',
            simhash: '00ff',
            etag: '"v1"',
            lastModified: 'Thu, 01 Jan 2026 00:00:00 GMT',
            changes: 0,
            changedAt: '2026-01-01T00:00:00.000Z',
          },
          duplicateOf: null,
        });
        expect(b.page).toMatchObject({ status: 203, contentKey: 'seg-1#h-b' });
        expect(b.page).not.toHaveProperty('etag');
        expect(missing).toEqual({ page: null, duplicateOf: null });
        await store.recordPages([]);
      });

      it('keeps the change history of a page fetched again: changes count new content, changedAt its time', async () => {
        const url = 'http://a.test/';
        await store.recordPages([page(url, 'v1', '2026-01-01T00:00:00.000Z')]);
        await store.recordPages([page(url, 'v1', '2026-01-02T00:00:00.000Z', { etag: '"e1"' })]);
        expect(await store.validators([url])).toEqual([
          { fetchedAt: '2026-01-02T00:00:00.000Z', etag: '"e1"', contentHash: 'v1', changes: 0, changedAt: '2026-01-01T00:00:00.000Z' },
        ]);
        await store.recordPages([page(url, 'v2', '2026-01-03T00:00:00.000Z')]);
        // A URL twice in one batch: both fetches count, in order, the last one's record kept.
        await store.recordPages([page(url, 'v3', '2026-01-04T00:00:00.000Z'), page(url, 'v3', '2026-01-05T00:00:00.000Z', { lastModified: 'x' })]);
        expect(await store.validators([url, 'http://none.test/'])).toEqual([
          { fetchedAt: '2026-01-05T00:00:00.000Z', lastModified: 'x', contentHash: 'v3', changes: 2, changedAt: '2026-01-04T00:00:00.000Z' },
          null,
        ]);
        expect((await store.lookup([url]))[0].page).toMatchObject({ contentHash: 'v3', changes: 2 });
      });
    });

    describe('crawls', () => {
      it('keeps the records of another crawl (another CRAWLER_PREFIX) on the same server apart: each reads its own', async () => {
        const other = await make('Other-Crawl');
        try {
          const url = 'http://shared.test/';
          await store.recordPages([page(url, 'h-mine', '2026-01-01T00:00:00.000Z', { etag: '"mine"' })]);
          await other.recordPages([page(url, 'h-theirs', '2026-01-02T00:00:00.000Z')]);
          await other.recordPages([page(url, 'h-theirs-2', '2026-01-03T00:00:00.000Z')]);
          await other.recordDuplicates([{ url: 'http://copy.test/', duplicateOf: { kind: 'exact', original: url } }]);
          const [mine, copy] = await store.lookup([url, 'http://copy.test/']);
          expect(mine.page).toMatchObject({ contentKey: 'seg-1#h-mine', contentHash: 'h-mine', etag: '"mine"', changes: 0 });
          expect(copy).toEqual({ page: null, duplicateOf: null });
          expect((await other.lookup([url]))[0].page).toMatchObject({ contentKey: 'seg-1#h-theirs-2', changes: 1 });
          expect(await store.validators([url])).toEqual([expect.objectContaining({ fetchedAt: '2026-01-01T00:00:00.000Z', changes: 0 })]);
          // Claims of one content hash or one simhash, and captures: each crawl's first claim is its own.
          expect(await store.claimContent([{ contentHash: 'h', url: 'http://a.test/' }])).toEqual(['http://a.test/']);
          expect(await other.claimContent([{ contentHash: 'h', url: 'http://b.test/' }])).toEqual(['http://b.test/']);
          expect(await store.claimSimhashes([{ simhash: '0123456789abcdef', owner: 'h-a' }], 3)).toEqual(['h-a']);
          expect(await other.claimSimhashes([{ simhash: '0123456789abcdef', owner: 'h-b' }], 3)).toEqual(['h-b']);
          await other.recordCaptures([{ contentHash: 'h', url: 'http://b.test/', date: 'd', digest: 'g', recordId: 'r' }]);
          expect(await store.capturesOf(['h'])).toEqual([null]);
        } finally {
          await other.close();
        }
      });
    });

    describe('content claims', () => {
      it('gives a content hash to the first URL that claims it, and answers that owner to later claims', async () => {
        expect(await store.claimContent([{ contentHash: 'h1', url: 'http://a.test/' }])).toEqual(['http://a.test/']);
        expect(
          await store.claimContent([
            { contentHash: 'h1', url: 'http://b.test/' },
            { contentHash: 'h2', url: 'http://c.test/' },
            { contentHash: 'h2', url: 'http://d.test/' },
            { contentHash: 'h1', url: 'http://a.test/' },
          ]),
        ).toEqual(['http://a.test/', 'http://c.test/', 'http://c.test/', 'http://a.test/']);
        expect(await store.ownersOf(['h2', 'none', 'h1'])).toEqual(['http://c.test/', null, 'http://a.test/']);
        expect(await store.claimContent([])).toEqual([]);
      });

      it('lets exactly one of many racing claims win', async () => {
        const urls = Array.from({ length: 20 }, (_, i) => `http://racer-${i}.test/`);
        const answers = await Promise.all(
          urls.map((url) =>
            store.claimContent([
              { contentHash: 'contested', url },
              { contentHash: `own-${url}`, url },
            ]),
          ),
        );
        const owners = new Set(answers.map(([owner]) => owner));
        expect(owners.size).toBe(1);
        expect(urls).toContain([...owners][0]);
        answers.forEach(([, own], i) => expect(own).toBe(urls[i]));
      });
    });

    describe('duplicates', () => {
      it('records exact and near duplicates in a batch (a URL recorded again is overwritten)', async () => {
        await store.recordDuplicates([
          { url: 'http://copy.test/', duplicateOf: { kind: 'exact', original: 'http://a.test/' } },
          { url: 'http://near.test/', duplicateOf: { kind: 'near', original: 'http://a.test/', distance: 3 } },
          { url: 'http://copy.test/', duplicateOf: { kind: 'exact', original: 'http://b.test/' } },
        ]);
        const [copy, near, none] = await store.lookup(['http://copy.test/', 'http://near.test/', 'http://a.test/']);
        expect(copy).toEqual({ page: null, duplicateOf: { kind: 'exact', original: 'http://b.test/' } });
        expect(near.duplicateOf).toEqual({ kind: 'near', original: 'http://a.test/', distance: 3 });
        expect(none.duplicateOf).toBeNull();
        await store.recordDuplicates([]);
      });
    });

    describe('WARC captures', () => {
      it('records captures by content hash and reads them back for revisit records', async () => {
        const capture = { contentHash: 'h1', url: 'http://a.test/', date: '2026-01-01T00:00:00Z', digest: 'sha1:ABC', recordId: '<urn:uuid:1>' };
        await store.recordCaptures([capture, { ...capture, contentHash: 'h2', url: 'http://b.test/' }]);
        expect(await store.capturesOf(['h2', 'none', 'h1'])).toEqual([{ ...capture, contentHash: 'h2', url: 'http://b.test/' }, null, capture]);
        await store.recordCaptures([{ ...capture, recordId: '<urn:uuid:2>' }]);
        expect((await store.capturesOf(['h1']))[0]?.recordId).toBe('<urn:uuid:2>');
      });
    });

    describe('near-duplicate index', () => {
      const base = '0123456789abcdef';
      /** `simhash` with the given bits (0 = most significant) flipped. */
      const flip = (simhash: string, ...bits: number[]) =>
        bits.reduce((value, bit) => (BigInt(`0x${value}`) ^ (1n << BigInt(63 - bit))).toString(16).padStart(16, '0'), simhash);

      it('finds the nearest indexed simhash within the distance, with its owner, and nothing farther', async () => {
        expect(await store.claimSimhashes([{ simhash: base, owner: 'h-base' }], 3)).toEqual(['h-base']);
        // 2 bits off in one band, 3 bits spread over three bands: both found (the pigeonhole leaves one band whole).
        const [twoOff, spread, fourOff, none] = await store.nearSimhashes([flip(base, 1, 2), flip(base, 5, 21, 40), flip(base, 0, 16, 32, 48), 'ffffffffffffffff'], 3);
        expect(twoOff).toEqual({ simhash: base, distance: 2, owner: 'h-base' });
        expect(spread).toEqual({ simhash: base, distance: 3, owner: 'h-base' });
        expect(fourOff).toBeNull();
        expect(none).toBeNull();
        // The nearer of two; at equal distance the smaller simhash.
        const nearer = flip(base, 63);
        await store.claimSimhashes([{ simhash: nearer, owner: 'h-nearer' }], 3);
        expect((await store.nearSimhashes([flip(base, 63, 62)], 3))[0]).toEqual({ simhash: nearer, distance: 1, owner: 'h-nearer' });
        const twoBits = flip(base, 61, 63); // …ea, below base
        await store.claimSimhashes([{ simhash: twoBits, owner: 'h-two-bits' }], 3);
        expect((await store.nearSimhashes([flip(base, 61)], 3))[0]).toEqual({ simhash: twoBits, distance: 1, owner: 'h-two-bits' });
        expect(await store.nearSimhashes([], 3)).toEqual([]);
      });

      it('keeps the first owner of a simhash: a later claim is told it, a redelivery finds itself', async () => {
        expect(await store.claimSimhashes([{ simhash: base, owner: 'first' }], 3)).toEqual(['first']);
        expect(await store.claimSimhashes([{ simhash: base, owner: 'first' }], 3)).toEqual(['first']);
        const other = flip(base, 10);
        expect(
          await store.claimSimhashes(
            [
              { simhash: base, owner: 'second' },
              { simhash: other, owner: 'o1' },
              { simhash: other, owner: 'o2' },
            ],
            3,
          ),
        ).toEqual(['first', 'o1', 'o1']);
        expect((await store.nearSimhashes([base], 3))[0]).toEqual({ simhash: base, distance: 0, owner: 'first' });
        expect(await store.claimSimhashes([], 3)).toEqual([]);
      });

      it('lets exactly one of many racing claims of a simhash win, in every band', async () => {
        const owners = Array.from({ length: 12 }, (_, i) => `racer-${i}`);
        const answers = await Promise.all(
          owners.map((owner, i) =>
            store.claimSimhashes(
              [
                { simhash: flip('fedcba9876543210', i), owner: `own-${i}` },
                { simhash: base, owner },
              ],
              3,
            ),
          ),
        );
        const winners = new Set(answers.map(([, winner]) => winner));
        expect(winners.size).toBe(1);
        expect(owners).toContain([...winners][0]);
        // Whichever band a lookup comes in by, it names the winner.
        for (const near of [flip(base, 0), flip(base, 20), flip(base, 40), flip(base, 60)]) {
          expect((await store.nearSimhashes([near], 3))[0]?.owner).toBe([...winners][0]);
        }
      });

      it('keeps one index per distance, and finds exact matches at distance 0 and wide ones at 15', async () => {
        await store.claimSimhashes([{ simhash: base, owner: 'd3' }], 3);
        expect(await store.nearSimhashes([base], 0)).toEqual([null]);
        expect(await store.claimSimhashes([{ simhash: base, owner: 'd0' }], 0)).toEqual(['d0']);
        expect(await store.nearSimhashes([base, flip(base, 1)], 0)).toEqual([{ simhash: base, distance: 0, owner: 'd0' }, null]);
        await store.claimSimhashes([{ simhash: base, owner: 'd15' }], 15);
        expect((await store.nearSimhashes([flip(base, 0, 5, 9, 14, 19, 23, 27, 31, 36, 40, 44, 48, 52, 56, 60)], 15))[0]).toEqual({
          simhash: base,
          distance: 15,
          owner: 'd15',
        });
        await expect(store.nearSimhashes([base], 16)).rejects.toThrow(RangeError);
      });
    });

    it('answers empty reads with nothing', async () => {
      expect(await store.lookup([])).toEqual([]);
      expect(await store.validators([])).toEqual([]);
      expect(await store.ownersOf([])).toEqual([]);
      expect(await store.capturesOf([])).toEqual([]);
    });
  });
}
