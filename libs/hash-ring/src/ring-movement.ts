import type { HashRing } from './hash-ring';

export interface RingMovement {
  /** Keys whose owner differs between the two rings. */
  moved: number;
  /** Keys examined. */
  total: number;
  /** moved / total (0 when there were no keys). */
  fraction: number;
  /** For each member of `before`, how many of its keys moved away from it. */
  movedFrom: Map<string, number>;
  /** For each member of `after`, how many keys moved to it. */
  movedTo: Map<string, number>;
}

/**
 * How many of `keys` change owner between two rings, and between which members. A key with no owner on
 * an empty ring counts as moved when the other ring gives it one; it then appears only in the map of the
 * side that has an owner.
 */
export function movedKeys(before: HashRing, after: HashRing, keys: Iterable<string>): RingMovement {
  let moved = 0;
  let total = 0;
  const movedFrom = new Map<string, number>();
  const movedTo = new Map<string, number>();
  for (const key of keys) {
    total++;
    const from = before.owner(key);
    const to = after.owner(key);
    if (from === to) continue;
    moved++;
    if (from !== null) movedFrom.set(from, (movedFrom.get(from) ?? 0) + 1);
    if (to !== null) movedTo.set(to, (movedTo.get(to) ?? 0) + 1);
  }
  return { moved, total, fraction: total === 0 ? 0 : moved / total, movedFrom, movedTo };
}
