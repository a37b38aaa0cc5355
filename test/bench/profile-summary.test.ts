import { type CpuProfile, ownerOf, ownerTable, selfTimeByOwner } from '../../bench/profile/summarize';

describe('profile summary', () => {
  it('names the owner of a function from its script', () => {
    expect(ownerOf('parse', 'file:///w/node_modules/htmlparser2/lib/Parser.js')).toBe('htmlparser2');
    expect(ownerOf('x', 'file:///w/node_modules/@nestjs/core/a.js')).toBe('@nestjs/core');
    expect(ownerOf('x', 'file:///w/node_modules/a/node_modules/b/i.js')).toBe('b');
    expect(ownerOf('simhash64', 'file:///w/dist/libs/simhash/src/simhash.js')).toBe('libs/simhash');
    expect(ownerOf('main', 'file:///w/dist/apps/frontier/src/main.js')).toBe('apps/frontier');
    expect(ownerOf('deflate', 'node:zlib')).toBe('node:zlib');
    expect(ownerOf('x', 'node:internal/streams/readable')).toBe('node:internal/streams');
    expect(ownerOf('(garbage collector)', '')).toBe('(garbage collector)');
    expect(ownerOf('JSONParse', '')).toBe('(native)');
    expect(ownerOf('x', 'file:///w/dist/bench/bench.js')).toBe('bench');
  });

  it('adds up self time per owner from the sample deltas, leaving idle out', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: { functionName: '(idle)', url: '' } },
        { id: 2, callFrame: { functionName: 'parse', url: '/x/node_modules/htmlparser2/a.js' } },
        { id: 3, callFrame: { functionName: 'gzip', url: 'node:zlib' } },
      ],
      samples: [2, 1, 3, 2],
      timeDeltas: [0, 1000, 5000, 2000, 3000],
    };
    expect(Object.fromEntries(selfTimeByOwner(profile))).toEqual({ htmlparser2: 4, 'node:zlib': 2 });
  });

  it('tables owners biggest first, with ms per page, dropping the small ones', () => {
    const table = ownerTable(
      new Map([
        ['a', 10],
        ['b', 90],
        ['tiny', 0.5],
      ]),
      10,
      0.01,
    ).split('\n');
    expect(table[2]).toBe('| b | 90 | 89.6 % | 9.000 |');
    expect(table[3]).toBe('| a | 10 | 10.0 % | 1.000 |');
    expect(table).toHaveLength(5);
    expect(table[4]).toContain('**all (busy)** | 101');
  });
});
