import { ALL_STATUSES, isTerminal, TaskStatus, type Task } from './task';

/**
 * Per-task history (TaskStore.history): the last N status transitions of a task, written by the
 * store in the same atomic step as each transition. N is the store option `historyLimit`
 * (default DEFAULT_HISTORY_LIMIT, 0 = off).
 *
 * - `from` is null for the creation. Stores do not write the creation: it is the task's
 *   createdAt (version 1), so `withCreation` adds it on read while it is among the last N.
 * - `error`: the task's error text right after a transition that ends an attempt or the task
 *   without success (into FAILED, CANCELED, TIMED_OUT, SUBMIT_UNKNOWN, or SUBMITTING back to
 *   PENDING_SUBMIT), when it has one; cut to HISTORY_ERROR_MAX characters. Other transitions
 *   (SUCCEEDED included) carry none.
 * - `version`: the task's version right after the transition.
 */
export interface TaskHistoryEntry {
  at: number;
  from: TaskStatus | null;
  to: TaskStatus;
  version?: number;
  error?: string;
}

export const DEFAULT_HISTORY_LIMIT = 20;
export const MAX_HISTORY_LIMIT = 1000;
/** Longest error text a history entry keeps (the task's own `error` field is not cut). */
export const HISTORY_ERROR_MAX = 500;

/** Whether a transition's entry carries the task's error (see TaskHistoryEntry). */
export function historyKeepsError(from: TaskStatus, to: TaskStatus): boolean {
  return (isTerminal(to) && to !== TaskStatus.SUCCEEDED) || (from === TaskStatus.SUBMITTING && to === TaskStatus.PENDING_SUBMIT);
}

/** The error an entry keeps: cut to HISTORY_ERROR_MAX, none when empty. */
export function historyError(error: string | null | undefined): string | undefined {
  if (error === null || error === undefined || error === '') return undefined;
  return error.length > HISTORY_ERROR_MAX ? error.slice(0, HISTORY_ERROR_MAX) : error;
}

/**
 * The stored transitions (oldest first, at most `limit`) with the creation in front while it is
 * among the last `limit` transitions, i.e. while fewer than `limit` were stored.
 */
export function withCreation(task: Pick<Task, 'createdAt'>, stored: readonly TaskHistoryEntry[], limit: number): TaskHistoryEntry[] {
  if (limit <= 0) return [];
  const tail = stored.length > limit ? stored.slice(stored.length - limit) : [...stored];
  if (tail.length < limit) tail.unshift({ at: task.createdAt, from: null, to: TaskStatus.PENDING_SUBMIT, version: 1 });
  return tail;
}

/** The status of its code in stored history: its index in ALL_STATUSES. */
export function statusOfCode(code: number): TaskStatus {
  const s = ALL_STATUSES[code];
  if (s === undefined) throw new Error(`bad status code ${code} in stored history`);
  return s;
}

/**
 * The text form of the history that the Redis and SQL stores keep with the task: entries
 * `at,<from><to>,version[,error]` (from / to: one digit, the index in ALL_STATUSES) joined by
 * HISTORY_SEPARATOR (the ASCII record separator; errors have it replaced). The error is last, so
 * it may hold commas.
 */
export const HISTORY_SEPARATOR = '\u001e';

export function parseHistoryText(text: string | null | undefined): TaskHistoryEntry[] {
  if (!text) return [];
  const out: TaskHistoryEntry[] = [];
  for (const line of text.split(HISTORY_SEPARATOR)) if (line !== '') out.push(parseHistoryEntry(line));
  return out;
}

function parseHistoryEntry(line: string): TaskHistoryEntry {
  const c1 = line.indexOf(',');
  const c3 = line.indexOf(',', c1 + 4);
  const e: TaskHistoryEntry = {
    at: Number(line.slice(0, c1)),
    from: statusOfCode(line.charCodeAt(c1 + 1) - 48),
    to: statusOfCode(line.charCodeAt(c1 + 2) - 48),
    version: Number(c3 < 0 ? line.slice(c1 + 4) : line.slice(c1 + 4, c3)),
  };
  const error = c3 < 0 ? undefined : historyError(line.slice(c3 + 1));
  if (error !== undefined) e.error = error;
  return e;
}
