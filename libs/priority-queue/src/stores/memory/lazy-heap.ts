/**
 * A 4-ary min-heap with lazy deletion, keyed by two inline numbers (k1, then k2) and, when both
 * tie, by a comparison of the items themselves.
 *
 * Why this shape (the memory store holds up to millions of tasks):
 * - keys live in packed number arrays, so sifting reads contiguous memory instead of chasing one
 *   task object per comparison; 4 children share a cache line;
 * - no position is written into the items on every move; instead each entry carries a token and
 *   an entry is live only while its item still holds that token (`isLive`). Removing an item from
 *   the middle is O(1): the owner changes the item's token and calls `noteRemoved()`. Dead entries
 *   are dropped when they reach the top, and the heap is rebuilt when they outnumber live ones,
 *   so the cost stays amortised O(log n) per operation and memory O(live).
 */
export abstract class LazyHeap<T> {
  private k1: number[] = [];
  private k2: number[] = [];
  private items: T[] = [];
  private tokens: number[] = [];
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
    this.k1.push(k1);
    this.k2.push(k2);
    this.items.push(item);
    this.tokens.push(token);
    this.siftUp(i);
  }

  /** The live item with the smallest key, after dropping dead entries from the top. */
  top(): T | undefined {
    const items = this.items;
    while (items.length > 0 && !this.isLive(items[0], this.tokens[0])) {
      this.removeTop();
      this.stale--;
    }
    return items.length > 0 ? items[0] : undefined;
  }

  /** k1 / k2 of the top entry; call after top() returned an item. */
  topK1(): number {
    return this.k1[0];
  }

  topK2(): number {
    return this.k2[0];
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
    for (let i = 0; i < this.items.length; i++) if (this.isLive(this.items[i], this.tokens[i])) out.push(this.items[i]);
    return out;
  }

  private less(i: number, j: number): boolean {
    const a = this.k1[i];
    const b = this.k1[j];
    if (a !== b) return a < b;
    const c = this.k2[i];
    const d = this.k2[j];
    if (c !== d) return c < d;
    return this.tie(this.items[i], this.items[j]) < 0;
  }

  private swap(i: number, j: number): void {
    const k1 = this.k1;
    const k2 = this.k2;
    const items = this.items;
    const tokens = this.tokens;
    let n = k1[i];
    k1[i] = k1[j];
    k1[j] = n;
    n = k2[i];
    k2[i] = k2[j];
    k2[j] = n;
    const it = items[i];
    items[i] = items[j];
    items[j] = it;
    n = tokens[i];
    tokens[i] = tokens[j];
    tokens[j] = n;
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
    this.k1.pop();
    this.k2.pop();
    this.items.pop();
    this.tokens.pop();
    if (last > 1) this.siftDown(0);
  }

  private compact(): void {
    let w = 0;
    for (let r = 0; r < this.items.length; r++) {
      if (!this.isLive(this.items[r], this.tokens[r])) continue;
      this.k1[w] = this.k1[r];
      this.k2[w] = this.k2[r];
      this.items[w] = this.items[r];
      this.tokens[w] = this.tokens[r];
      w++;
    }
    this.k1.length = w;
    this.k2.length = w;
    this.items.length = w;
    this.tokens.length = w;
    this.stale = 0;
    for (let i = (w - 2) >> 2; i >= 0; i--) this.siftDown(i);
  }
}
