import { ALL_STATUSES, type TaskStatus } from '../../core/task';
import type { PendingPriorityStats, QueueStats } from '../../core/task-store.port';
import { BucketQueue } from './bucket-queue';
import { RUN_AT, STATUS_CODE, STATUS_COUNT, type TaskTable } from './task-table';

/** PENDING_SUBMIT tasks of one priority: all of them, and the due ones by runAt. */
export interface Bucket {
  count: number;
  due: number;
  readonly queue: BucketQueue;
}

/**
 * The counts behind QueueStats kept on every write, so that stats() reads no task: tasks per
 * status, and the PENDING_SUBMIT tasks per priority (a bucket each, whose due tasks by runAt
 * also serve query pages and explain's `ahead`, task-scan.ts).
 */
export class PendingStats {
  readonly statusCounts: number[] = new Array<number>(STATUS_COUNT).fill(0);
  readonly buckets = new Map<number, Bucket>();

  constructor(private readonly t: TaskTable) {}

  /** The bucket of a priority, made on first use (the caller counts the task in it). */
  bucketOf(priority: number): Bucket {
    let b = this.buckets.get(priority);
    if (b === undefined) {
      b = { count: 0, due: 0, queue: new BucketQueue(this.t) };
      this.buckets.set(priority, b);
    }
    return b;
  }

  /** One task of the bucket stopped being PENDING_SUBMIT: the bucket goes when it was the last. */
  leave(priority: number, b: Bucket): void {
    if (--b.count === 0) this.buckets.delete(priority);
  }

  /** byStatus and pending of QueueStats at `now`. */
  snapshot(now: number): Pick<QueueStats, 'byStatus' | 'pending'> {
    const byStatus = {} as Record<TaskStatus, number>;
    for (const st of ALL_STATUSES) byStatus[st] = this.statusCounts[STATUS_CODE[st]];
    const pending: PendingPriorityStats[] = [];
    for (const [priority, b] of this.buckets) {
      const oldest = b.due > 0 ? b.queue.top() : undefined;
      pending.push({ priority, count: b.count, oldestWaitMs: oldest === undefined ? 0 : now - this.t.num(oldest, RUN_AT) });
    }
    pending.sort((a, b) => b.priority - a.priority);
    return { byStatus, pending };
  }
}
