/**
 * What the reference model (reference-model.ts) and a store must agree on, shared by the
 * model-based test (model-based.ts), the trace runner (test/traces) and the chaos runs
 * (test/chaos): a task seen without what the model does not decide (versions, lease ids,
 * updatedAt, results), and every task of a queue read page by page.
 */
import { ALL_STATUSES, isTerminal, type Task, type TaskStatus } from '../../libs/priority-queue/src/core';
import type { ModelTask } from './reference-model';

/** A task as the reference model decides it; `attempts` only while the task is not terminal. */
export function taskView(t: ModelTask | Task) {
  return {
    id: t.id,
    status: t.status,
    priority: t.priority,
    runAt: t.runAt,
    deadlineAt: t.deadlineAt,
    attempts: isTerminal(t.status) ? undefined : t.attempts,
    cancelRequested: t.cancelRequested,
    leaseOwner: t.leaseOwner,
    leaseUntil: t.leaseUntil,
    nextPollAt: t.nextPollAt,
    externalId: t.externalId,
    pollErrors: t.pollErrors,
    finishedAt: t.finishedAt,
    fairTag: t.fairTag,
    boostAt: t.boostAt,
    boostPriority: t.boostPriority,
  };
}

export type TaskView = ReturnType<typeof taskView>;

/** The views of some tasks in id order, ready for toEqual. */
export function taskViews(ts: Iterable<ModelTask | Task>): TaskView[] {
  return [...ts].map(taskView).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** One page of a status after a seq: a store's list, PriorityQueue.list or TaskManager.list. */
export type ListPage = (status: TaskStatus, limit: number, afterSeq: number | undefined) => Promise<Task[]>;

/** Every task of the given statuses, read in pages of `pageSize` by seq. */
export async function listAll(list: ListPage, statuses: readonly TaskStatus[] = ALL_STATUSES, pageSize = 1000): Promise<Task[]> {
  const out: Task[] = [];
  for (const status of statuses) {
    let after: number | undefined;
    for (;;) {
      const page = await list(status, pageSize, after);
      out.push(...page);
      if (page.length < pageSize) break;
      after = page[page.length - 1].seq;
    }
  }
  return out;
}
