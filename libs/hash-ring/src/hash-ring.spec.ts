import { DEFAULT_VIRTUAL_NODES, HashRing } from './hash-ring';
import { murmur3_32 } from '@crawler/murmur3';
import { movedKeys } from './ring-movement';

const HOSTS = Array.from({ length: 10_000 }, (_, i) => `site-${i}.test`);
const FOUR = ['downloader-1', 'downloader-2', 'downloader-3', 'downloader-4'];
const FIVE = [...FOUR, 'downloader-5'];

function shares(ring: HashRing, keys: string[]): Map<string, number> {
  const counts = new Map<string, number>(ring.members().map((m) => [m, 0]));
  for (const key of keys) {
    const owner = ring.owner(key)!;
    counts.set(owner, counts.get(owner)! + 1);
  }
  return new Map([...counts].map(([m, n]) => [m, n / keys.length]));
}

describe('HashRing', () => {
  it('answers null on an empty ring', () => {
    expect(new HashRing().owner('example.com')).toBeNull();
    expect(new HashRing(['a']).withoutMember('a').owner('example.com')).toBeNull();
    expect(new HashRing().size).toBe(0);
    expect(new HashRing().members()).toEqual([]);
  });

  it('keeps sorted, distinct members and answers new rings on change, the same ring when nothing changes', () => {
    const ring = new HashRing(['c', 'a', 'b', 'a']);
    expect(ring.members()).toEqual(['a', 'b', 'c']);
    expect(ring.size).toBe(3);
    expect(ring.virtualNodes).toBe(DEFAULT_VIRTUAL_NODES);
    expect(ring.withMember('a')).toBe(ring);
    expect(ring.withoutMember('z')).toBe(ring);
    const bigger = ring.withMember('d');
    expect(bigger).not.toBe(ring);
    expect(bigger.members()).toEqual(['a', 'b', 'c', 'd']);
    expect(ring.members()).toEqual(['a', 'b', 'c']);
    expect(ring.withoutMember('b').members()).toEqual(['a', 'c']);
    expect(new HashRing(['a'], { virtualNodes: 7 }).withMember('b').virtualNodes).toBe(7);
    ring.members().push('x');
    expect(ring.members()).toEqual(['a', 'b', 'c']);
  });

  it('rejects bad member ids and virtual node counts', () => {
    expect(() => new HashRing([''])).toThrow(/non-empty string/);
    expect(() => new HashRing([], { virtualNodes: 0 })).toThrow(/virtualNodes/);
    expect(() => new HashRing([], { virtualNodes: 1.5 })).toThrow(/virtualNodes/);
    expect(() => new HashRing([], { virtualNodes: 1e6 })).toThrow(/virtualNodes/);
  });

  it('gives every key the same owner on rings built separately, whatever order members joined in', () => {
    const a = new HashRing(FOUR);
    const b = new HashRing([...FOUR].reverse());
    const c = new HashRing().withMember('downloader-3').withMember('downloader-1').withMember('downloader-4').withMember('downloader-2');
    const d = new HashRing(FIVE).withoutMember('downloader-5');
    const owners = HOSTS.map((h) => a.owner(h));
    expect(new Set(owners)).toEqual(new Set(FOUR));
    for (const ring of [a, b, c, d]) expect(HOSTS.map((h) => ring.owner(h))).toEqual(owners);
  });

  it('pins the assignment: these owners must never change (every process must agree on them)', () => {
    const ring = new HashRing(FOUR);
    expect(['example.com', 'site-0.test', 'site-1.test', 'wikipedia.org', 'bücher.de'].map((h) => ring.owner(h))).toEqual(GOLDEN);
  });

  it('breaks ties between colliding points by member id, in any join order', () => {
    // With one virtual node each, these two ids land on the same 32-bit point.
    const [low, high] = ['dl-101455', 'dl-44057'];
    expect(murmur3_32(`${low}#0`)).toBe(murmur3_32(`${high}#0`));
    for (const ring of [new HashRing([low, high], { virtualNodes: 1 }), new HashRing([high, low], { virtualNodes: 1 })]) {
      for (const host of HOSTS.slice(0, 100)) expect(ring.owner(host)).toBe(low);
      expect(ring.withoutMember(low).owner('example.com')).toBe(high);
    }
  });

  it('balances 10,000 hosts over 4 members: each owns between 18% and 32%', () => {
    const byMember = shares(new HashRing(FOUR), HOSTS);
    expect(byMember.size).toBe(4);
    for (const share of byMember.values()) {
      expect(share).toBeGreaterThanOrEqual(0.18);
      expect(share).toBeLessThanOrEqual(0.32);
    }
  });

  it('adding a 5th member to 4 moves 15–25% of hosts, every one of them to the new member', () => {
    const before = new HashRing(FOUR);
    const after = before.withMember('downloader-5');
    const movement = movedKeys(before, after, HOSTS);
    expect(movement.total).toBe(HOSTS.length);
    expect(movement.fraction).toBeGreaterThanOrEqual(0.15);
    expect(movement.fraction).toBeLessThanOrEqual(0.25);
    expect([...movement.movedTo]).toEqual([['downloader-5', movement.moved]]);
    // …and the new member owns exactly the hosts that moved.
    expect(HOSTS.filter((h) => after.owner(h) === 'downloader-5')).toHaveLength(movement.moved);
  });

  it('removing one of 5 members moves exactly the hosts it owned, and nothing else', () => {
    const before = new HashRing(FIVE);
    for (const gone of FIVE) {
      const after = before.withoutMember(gone);
      const owned = HOSTS.filter((h) => before.owner(h) === gone).length;
      const movement = movedKeys(before, after, HOSTS);
      expect(owned).toBeGreaterThan(0);
      expect([...movement.movedFrom]).toEqual([[gone, owned]]);
      expect(movement.moved).toBe(owned);
      expect(movement.movedTo.has(gone)).toBe(false);
      expect([...movement.movedTo.values()].reduce((a, b) => a + b, 0)).toBe(owned);
    }
  });

  it('counts a move from or to an empty ring', () => {
    const movement = movedKeys(new HashRing(), new HashRing(['a']), ['x', 'y']);
    expect(movement).toEqual({ moved: 2, total: 2, fraction: 1, movedFrom: new Map(), movedTo: new Map([['a', 2]]) });
    expect(movedKeys(new HashRing(), new HashRing(), []).fraction).toBe(0);
  });

  it('answers 1,000,000 lookups on a 10-member ring', () => {
    const ring = new HashRing(Array.from({ length: 10 }, (_, i) => `downloader-${i}`));
    const counts = new Map<string, number>();
    for (let round = 0; round < 100; round++) {
      for (const host of HOSTS) {
        const owner = ring.owner(host)!;
        counts.set(owner, (counts.get(owner) ?? 0) + 1);
      }
    }
    expect(counts.size).toBe(10);
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(1_000_000);
  });
});

const GOLDEN = ['downloader-2', 'downloader-2', 'downloader-1', 'downloader-2', 'downloader-3'];
