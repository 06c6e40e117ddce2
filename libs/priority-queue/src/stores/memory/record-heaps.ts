import { LazyHeap } from './lazy-heap';
import type { TaskTable } from './task-table';

/**
 * Heaps of task slots (see lazy-heap.ts and task-table.ts). An entry is live while the slot's
 * token field (one per kind of membership) still holds the entry's token. Keys: lane heaps use
 * the order key (order-mode.ts); every other heap a time, then seq.
 */
export class SlotHeap extends LazyHeap<number> {
  constructor(
    private readonly table: TaskTable,
    /** The token field of TaskTable (Q_TOK, D_TOK, L_TOK, P_TOK). */
    private readonly tokenField: number,
    tie?: (a: number, b: number) => number,
  ) {
    super(tie);
  }

  protected isLive(s: number, token: number): boolean {
    return this.table.num(s, this.tokenField) === token;
  }
}

/** Terminal tasks by finishedAt (purge); entries leave only by purge, from the top. */
export class FinishedHeap extends LazyHeap<number> {
  protected isLive(): boolean {
    return true;
  }
}
