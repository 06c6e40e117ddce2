/**
 * A 4-ary min-heap with lazy deletion, keyed by inline numbers (k1, k2, k3, then a rank) and, when
 * those tie, by a comparison of the items themselves. The rank is a shortcut for the last
 * tie-break: two entries with non-zero ranks order by rank; a zero rank means "compare the items".
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
/** Numbers per entry in `keys`. */
const S = 5;

export abstract class LazyHeap<T> {
  /** [k1, k2, k3, rank, token] per entry, interleaved. */
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

  push(item: T, k1: number, k2: number, token: number, k3 = 0, rank = 0): void {
    const i = this.items.length;
    this.keys.push(k1, k2, k3, rank, token);
    this.items.push(item);
    this.siftUp(i);
  }

  /**
   * The live item with the smallest key, after dropping dead entries from the top. While no
   * entry is dead (the owner reported none), the top is returned without reading the item.
   */
  top(): T | undefined {
    const items = this.items;
    if (this.stale === 0) return items.length > 0 ? items[0] : undefined;
    while (items.length > 0 && !this.isLive(items[0], this.keys[4])) {
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

  topK3(): number {
    return this.keys[2];
  }

  topRank(): number {
    return this.keys[3];
  }

  topToken(): number {
    return this.keys[4];
  }

  /** Removes the top entry; call after top() returned an item (it is then live). */
  pop(): void {
    this.removeTop();
  }

  /**
   * The owner invalidated the live entry (item, token) (changed the item's token): removes it at
   * once when it is the top entry (no item read), else counts it as dead (noteRemoved).
   */
  removeLive(item: T, token: number): void {
    if (this.items.length > 0 && this.items[0] === item && this.keys[4] === token) this.removeTop();
    else this.noteRemoved();
  }

  /** The owner invalidated one live entry: it changed the item's token BEFORE this call. */
  noteRemoved(): void {
    this.stale++;
    if (this.stale > 32 && this.stale * 2 > this.items.length) this.compact();
  }

  /** Live items in no particular order (for rebuilding other structures and for tests). */
  liveItems(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.items.length; i++) if (this.isLive(this.items[i], this.keys[S * i + 4])) out.push(this.items[i]);
    return out;
  }

  private less(i: number, j: number): boolean {
    const keys = this.keys;
    const a = S * i;
    const b = S * j;
    if (keys[a] !== keys[b]) return keys[a] < keys[b];
    if (keys[a + 1] !== keys[b + 1]) return keys[a + 1] < keys[b + 1];
    if (keys[a + 2] !== keys[b + 2]) return keys[a + 2] < keys[b + 2];
    const ra = keys[a + 3];
    const rb = keys[b + 3];
    if (ra !== 0 && rb !== 0) return ra < rb;
    return this.tie(this.items[i], this.items[j]) < 0;
  }

  private swap(i: number, j: number): void {
    const keys = this.keys;
    const items = this.items;
    const a = S * i;
    const b = S * j;
    for (let k = 0; k < S; k++) {
      const n = keys[a + k];
      keys[a + k] = keys[b + k];
      keys[b + k] = n;
    }
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
    this.keys.length = S * last;
    this.items.pop();
    if (last > 1) this.siftDown(0);
  }

  private compact(): void {
    const keys = this.keys;
    const items = this.items;
    let w = 0;
    for (let r = 0; r < items.length; r++) {
      if (!this.isLive(items[r], keys[S * r + 4])) continue;
      for (let k = 0; k < S; k++) keys[S * w + k] = keys[S * r + k];
      items[w] = items[r];
      w++;
    }
    keys.length = S * w;
    items.length = w;
    this.stale = 0;
    for (let i = (w - 2) >> 2; i >= 0; i--) this.siftDown(i);
  }
}
