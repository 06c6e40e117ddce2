const PAGE_SIZE = 4096;

/** What the index needs of the store's id sequence (core/task-ids.ts TaskIdSequence). */
export interface IdNumbers {
  numberOf(id: string): number;
}

interface Page {
  /** Slot of each number of the page (-1 = none). */
  readonly slots: Int32Array;
  live: number;
}

/**
 * Task slot by task id. The store makes the ids of the tasks submitted to it (newTaskId, from
 * its own TaskIdSequence), and the sequence's numberOf gives each of them back its number: consecutive
 * submits get consecutive numbers, kept in pages of 4,096, so that an insert or a lookup is an
 * index into a typed array near the slots of the tasks submitted just before: no string hashing,
 * no random probe into a table of a million entries (each one a cache miss). Any other id
 * (numberOf -1) goes to a Map. numberOf gives one number to one string only, so the two never
 * hold the same id.
 *
 * The index calls the sequence's method rather than a function the store passes: a closure made
 * per store is a new call target for every store, so compiled code that inlined one store's
 * closure deoptimizes at the next store's first create (a second queue, or a test's fresh store).
 */
export class IdIndex {
  private readonly others = new Map<string, number>();
  private readonly pages = new Map<number, Page>();
  /** The page used last (consecutive ids share it). */
  private lastNo = -1;
  private last: Page | null = null;
  private count = 0;

  /** `ids.numberOf`: the store's number of an id it made (a safe integer >= 0), else -1. */
  constructor(private readonly ids: IdNumbers) {}

  get size(): number {
    return this.count + this.others.size;
  }

  get(id: string): number | undefined {
    const n = this.ids.numberOf(id);
    if (n < 0) return this.others.get(id);
    const page = this.page(Math.floor(n / PAGE_SIZE));
    if (page === undefined) return undefined;
    const s = page.slots[n % PAGE_SIZE];
    return s < 0 ? undefined : s;
  }

  /** Adds id -> slot; false (nothing changed) when the id is already there. */
  add(id: string, slot: number): boolean {
    const n = this.ids.numberOf(id);
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
    const n = this.ids.numberOf(id);
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
}
