/** Length of a sequential id: a 24-character prefix and a 12-digit lowercase hex counter. */
const SEQ_ID_LENGTH = 36;
const PREFIX_LENGTH = 24;
const PAGE_SIZE = 4096;

interface Page {
  /** Slot of each counter of the page (-1 = none). */
  readonly slots: Int32Array;
  live: number;
}

/**
 * Task slot by task id. PriorityQueue makes ids from one per-process prefix and a counter
 * (queue.ts TaskIds): consecutive submits get consecutive counters. Such ids (the prefix of the
 * first id added to the empty index, then 12 lowercase hex digits) are kept in pages of 4,096 counters, so that an
 * insert or a lookup is a parse of 12 digits and an index into a typed array, near the slots of
 * the tasks submitted just before: no string hashing, no random probe into a table of a million
 * entries (each one a cache miss). Any other id (another prefix, another shape) goes to a Map.
 * The 12-digit lowercase form of a counter is unique, so the two never hold the same id.
 */
export class IdIndex {
  private readonly others = new Map<string, number>();
  private prefix: string | null = null;
  private readonly pages = new Map<number, Page>();
  /** The page used last (consecutive ids share it). */
  private lastNo = -1;
  private last: Page | null = null;
  private count = 0;

  get size(): number {
    return this.count + this.others.size;
  }

  get(id: string): number | undefined {
    const n = this.counterOf(id);
    if (n < 0) return this.others.get(id);
    const page = this.page(Math.floor(n / PAGE_SIZE));
    if (page === undefined) return undefined;
    const s = page.slots[n % PAGE_SIZE];
    return s < 0 ? undefined : s;
  }

  /** Adds id -> slot; false (nothing changed) when the id is already there. */
  add(id: string, slot: number): boolean {
    // the prefix is (re)learnt only while the index is empty: no id already held can change side
    if (this.size === 0 && id.length === SEQ_ID_LENGTH) this.prefix = id.slice(0, PREFIX_LENGTH);
    const n = this.counterOf(id);
    if (n < 0) {
      if (this.others.has(id)) return false;
      this.others.set(id, slot);
      return true;
    }
    const no = Math.floor(n / PAGE_SIZE);
    let page = this.page(no);
    if (page === undefined) {
      page = { slots: new Int32Array(PAGE_SIZE).fill(-1), live: 0 };
      this.pages.set(no, page);
      this.lastNo = no;
      this.last = page;
    }
    const i = n % PAGE_SIZE;
    if (page.slots[i] >= 0) return false;
    page.slots[i] = slot;
    page.live++;
    this.count++;
    return true;
  }

  delete(id: string): void {
    const n = this.counterOf(id);
    if (n < 0) {
      this.others.delete(id);
      return;
    }
    const no = Math.floor(n / PAGE_SIZE);
    const page = this.page(no);
    if (page === undefined || page.slots[n % PAGE_SIZE] < 0) return;
    page.slots[n % PAGE_SIZE] = -1;
    this.count--;
    if (--page.live === 0) {
      this.pages.delete(no);
      if (this.lastNo === no) {
        this.lastNo = -1;
        this.last = null;
      }
    }
  }

  private page(no: number): Page | undefined {
    if (no === this.lastNo) return this.last!;
    const page = this.pages.get(no);
    if (page !== undefined) {
      this.lastNo = no;
      this.last = page;
    }
    return page;
  }

  /** The counter of a sequential id with the known prefix, else -1. */
  private counterOf(id: string): number {
    const prefix = this.prefix;
    if (prefix === null || id.length !== SEQ_ID_LENGTH || !id.startsWith(prefix)) return -1;
    let n = 0;
    for (let i = PREFIX_LENGTH; i < SEQ_ID_LENGTH; i++) {
      const c = id.charCodeAt(i);
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (d < 0) return -1;
      n = n * 16 + d;
    }
    return n;
  }
}
