import { LazyHeap } from './lazy-heap';
import type { TaskTable } from './task-table';

/**
 * Heaps of task slots (see lazy-heap.ts and task-table.ts). An entry is live while the slot's
 * token field (one per kind of membership) still holds the entry's token. Keys: lane queues use
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

/**
 * Terminal tasks by finishedAt (purge), token = the task's seq: an entry is live while its slot
 * holds that task. Entries leave by purge, from the top, or die when a removal deletes the task
 * (noteRemoved, so that tasks deleted at finish do not pile up here until their retention).
 * purge() still checks finishedAt (a task requeued and finished again has a newer entry).
 */
export class FinishedHeap extends LazyHeap<number> {
  constructor(private readonly table: TaskTable) {
    super();
  }

  protected isLive(s: number, seq: number): boolean {
    return this.table.id(s) !== null && this.table.seq(s) === seq;
  }
}
