import { TaskStatus, type Task } from './task';

/**
 * TaskStore.requeue (PriorityQueue.retry): a finished task that did not succeed goes back to
 * PENDING_SUBMIT as a fresh attempt, in one atomic step:
 * - status PENDING_SUBMIT, attempts 0, pollErrors 0, runAt = now (it competes at its priority
 *   as a task that became due now: after the due tasks of its priority that waited longer);
 *   priority, createdAt, seq, idempotency key and payload kept;
 * - error, result, externalId, nextPollAt, finishedAt, cancelRequested and the lease cleared
 *   (the task's history keeps the errors of its earlier attempts);
 * - deadlineAt, when it had one, moves to now + its original timeout (deadlineAt - createdAt),
 *   so a TIMED_OUT task gets its full time again;
 * - version + 1, one status transition (event, history entry).
 */
export const RETRYABLE_STATUSES: readonly TaskStatus[] = [
  TaskStatus.FAILED,
  TaskStatus.TIMED_OUT,
  TaskStatus.CANCELED,
  TaskStatus.SUBMIT_UNKNOWN,
];

export function isRetryable(status: TaskStatus): boolean {
  return RETRYABLE_STATUSES.includes(status);
}

/** deadlineAt of a requeued task at store time `now`. */
export function requeuedDeadline(t: Pick<Task, 'deadlineAt' | 'createdAt'>, now: number): number | null {
  return t.deadlineAt === null ? null : now + (t.deadlineAt - t.createdAt);
}
