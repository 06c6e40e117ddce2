/**
 * A 4-ary min-heap with lazy deletion, keyed by two inline numbers (k1, then k2) and, when both
 * tie, by a comparison of the items themselves.
 *
 * Why this shape (the memory store holds up to millions of tasks):
 * - keys live in one packed number array, so sifting reads contiguous memory instead of chasing one
 *   task object per comparison; 4 children share a cache line;
 * - no position is written into the items on every move; instead each entry carries a token and
 *   an entry is live only while its item still holds that token (`isLive`). Removing an item from
 *   the middle is O(1): the owner changes the item's token and calls `noteRemoved()`. Dead entries
 *   are dropped when they reach the top, and the heap is rebuilt when they outnumber live ones,
 *   so the cost stays amortised O(log n) per operation and memory O(live).
 */
export abstract class LazyHeap<T> {
  /** [k1, k2, token] per entry, interleaved: one cache line holds the keys of 2-3 entries. */
  private keys: number[] = [];
  private items: T[] = [];
  private stale = 0;

  constructor(private readonly tie: (a: T, b: T) => number = () => 0) {}

  /** Whether the entry (item, token) still stands for the item's current membership. */
  protected abstract isLive(item: T, token: number): boolean;

  /** Entries held, dead ones included. */
  get length(): number {
    return this.items.length;
  }

  push(item: T, k1: number, k2: number, token: number): void {
    const i = this.items.length;
    this.keys.push(k1, k2, token);
    this.items.push(item);
    this.siftUp(i);
  }

  /** The live item with the smallest key, after dropping dead entries from the top. */
  top(): T | undefined {
    const items = this.items;
    while (items.length > 0 && !this.isLive(items[0], this.keys[2])) {
      this.removeTop();
      this.stale--;
    }
    return items.length > 0 ? items[0] : undefined;
  }

  /** k1 / k2 of the top entry; call after top() returned an item. */
  topK1(): number {
    return this.keys[0];
  }

  topK2(): number {
    return this.keys[1];
  }

  /** Removes the top entry; call after top() returned an item (it is then live). */
  pop(): void {
    this.removeTop();
  }

  /** The owner invalidated one live entry (changed the item's token). */
  noteRemoved(): void {
    this.stale++;
    if (this.stale > 32 && this.stale * 2 > this.items.length) this.compact();
  }

  /** Live items in no particular order (for rebuilding other structures and for tests). */
  liveItems(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.items.length; i++) if (this.isLive(this.items[i], this.keys[3 * i + 2])) out.push(this.items[i]);
    return out;
  }

  private less(i: number, j: number): boolean {
    const keys = this.keys;
    const a = keys[3 * i];
    const b = keys[3 * j];
    if (a !== b) return a < b;
    const c = keys[3 * i + 1];
    const d = keys[3 * j + 1];
    if (c !== d) return c < d;
    return this.tie(this.items[i], this.items[j]) < 0;
  }

  private swap(i: number, j: number): void {
    const keys = this.keys;
    const items = this.items;
    const a = 3 * i;
    const b = 3 * j;
    let n = keys[a];
    keys[a] = keys[b];
    keys[b] = n;
    n = keys[a + 1];
    keys[a + 1] = keys[b + 1];
    keys[b + 1] = n;
    n = keys[a + 2];
    keys[a + 2] = keys[b + 2];
    keys[b + 2] = n;
    const it = items[i];
    items[i] = items[j];
    items[j] = it;
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 2;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const n = this.items.length;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) return;
      let best = first;
      const end = first + 4 < n ? first + 4 : n;
      for (let c = first + 1; c < end; c++) if (this.less(c, best)) best = c;
      if (!this.less(best, i)) return;
      this.swap(i, best);
      i = best;
    }
  }

  private removeTop(): void {
    const last = this.items.length - 1;
    if (last > 0) this.swap(0, last);
    this.keys.length = 3 * last;
    this.items.pop();
    if (last > 1) this.siftDown(0);
  }

  private compact(): void {
    const keys = this.keys;
    const items = this.items;
    let w = 0;
    for (let r = 0; r < items.length; r++) {
      if (!this.isLive(items[r], keys[3 * r + 2])) continue;
      keys[3 * w] = keys[3 * r];
      keys[3 * w + 1] = keys[3 * r + 1];
      keys[3 * w + 2] = keys[3 * r + 2];
      items[w] = items[r];
      w++;
    }
    keys.length = 3 * w;
    items.length = w;
    this.stale = 0;
    for (let i = (w - 2) >> 2; i >= 0; i--) this.siftDown(i);
  }
}
