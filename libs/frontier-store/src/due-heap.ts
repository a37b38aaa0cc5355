/**
 * Back queues ordered by due time, with "set score" semantics like a Redis sorted set: a binary heap with
 * lazy deletion (stale entries are skipped when they surface). Ties go to the lower queue number, where
 * Redis compares members as strings: nothing may depend on the order of equally due hosts.
 */
export class DueHeap {
  private heap: [number, number][] = [];
  private readonly scores = new Map<number, number>();

  get size(): number {
    return this.scores.size;
  }

  has(id: number): boolean {
    return this.scores.has(id);
  }

  score(id: number): number | undefined {
    return this.scores.get(id);
  }

  set(id: number, due: number): void {
    this.scores.set(id, due);
    this.heap.push([due, id]);
    this.up(this.heap.length - 1);
  }

  delete(id: number): void {
    this.scores.delete(id);
  }

  /** The earliest live entry, without removing it. */
  peek(): [number, number] | undefined {
    for (;;) {
      const top = this.heap[0];
      if (!top) return undefined;
      if (this.scores.get(top[1]) === top[0]) return top;
      this.pop();
    }
  }

  private pop(): void {
    const last = this.heap.pop()!;
    if (this.heap.length === 0) return;
    this.heap[0] = last;
    this.down(0);
  }

  private less(a: [number, number], b: [number, number]): boolean {
    return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.heap[i], this.heap[parent])) return;
      [this.heap[i], this.heap[parent]] = [this.heap[parent], this.heap[i]];
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.heap.length && this.less(this.heap[l], this.heap[m])) m = l;
      if (r < this.heap.length && this.less(this.heap[r], this.heap[m])) m = r;
      if (m === i) return;
      [this.heap[i], this.heap[m]] = [this.heap[m], this.heap[i]];
      i = m;
    }
  }
}
