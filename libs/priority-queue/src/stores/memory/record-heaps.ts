import { LazyHeap } from './lazy-heap';
import type { TaskRecord } from './task-record';

/**
 * The heaps of task records, one class per membership token of TaskRecord (see lazy-heap.ts).
 * Keys: lane heaps use the order key (order-mode.ts); every other heap a time, then seq.
 */

/** Lane heaps (due tasks by order key) and the delayed heap (by runAt, seq). */
export class QueueHeap extends LazyHeap<TaskRecord> {
  protected isLive(r: TaskRecord, token: number): boolean {
    return r.qTok === token;
  }
}

/** Due tasks of one priority by runAt (for the oldest wait of stats()); shares the lane entry's token. */
export class BucketHeap extends LazyHeap<TaskRecord> {
  protected isLive(r: TaskRecord, token: number): boolean {
    return r.qTok === token;
  }
}

/** Tasks by deadlineAt. */
export class DeadlineHeap extends LazyHeap<TaskRecord> {
  protected isLive(r: TaskRecord, token: number): boolean {
    return r.dTok === token;
  }
}

/** Leased tasks by leaseUntil. */
export class LeaseHeap extends LazyHeap<TaskRecord> {
  protected isLive(r: TaskRecord, token: number): boolean {
    return r.lTok === token;
  }
}

/** SUBMITTED / RUNNING tasks without a lease, by nextPollAt. */
export class PollHeap extends LazyHeap<TaskRecord> {
  protected isLive(r: TaskRecord, token: number): boolean {
    return r.pTok === token;
  }
}

/** Terminal tasks by finishedAt (purge); entries leave only by purge, from the top. */
export class FinishedHeap extends LazyHeap<TaskRecord> {
  protected isLive(): boolean {
    return true;
  }
}
