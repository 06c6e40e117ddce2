import { ALL_STATUSES, TaskStatus, type NewTask, type Task } from '../../core/task';
import type { Lane } from './lanes';

/** Small integer of each status (index of the per-status bitmaps and counters). */
export const STATUS_CODE: Readonly<Record<TaskStatus, number>> = Object.fromEntries(
  ALL_STATUSES.map((s, i) => [s, i]),
) as Record<TaskStatus, number>;
export const STATUS_COUNT = ALL_STATUSES.length;

/** Where a PENDING_SUBMIT task waits. */
export const QUEUE_NONE = 0;
export const QUEUE_DUE = 1; // in its lane (runAt <= now at the last promotion)
export const QUEUE_DELAYED = 2; // in the delayed heap

/** Which deadline heap holds the task (only tasks without a live lease are in one). */
export const DEADLINE_NONE = 0;
export const DEADLINE_DUE = 1; // due PENDING_SUBMIT: timed out by claimSubmissions
export const DEADLINE_OTHER = 2; // delayed PENDING_SUBMIT, or in flight without a lease

/** Which lease heap holds the task. */
export const LEASE_NONE = 0;
export const LEASE_SUBMIT = 1; // SUBMITTING
export const LEASE_POLL = 2; // SUBMITTED / RUNNING claimed for a poll

/** Which poll heap holds the task (SUBMITTED / RUNNING without a live lease). */
export const POLL_NONE = 0;
export const POLL_DUE = 1; // by nextPollAt
export const POLL_CANCEL = 2; // cancelRequested: claimable at once

/**
 * The store's own copy of a task: every field of Task plus bookkeeping of the indexes.
 * Never handed out: callers get `toTask(record)`. Built by `newRecord` as one object literal
 * (one shape for all records, and V8 can allocate long-lived literals straight in old space).
 */
export interface TaskRecord {
  id: string;
  idempotencyKey: string | null;
  type: string;
  /** A primitive payload as is; for an object or array: undefined, see payloadJson. */
  payload: unknown;
  /** An object / array payload, serialised once: every read parses a fresh copy. */
  payloadJson: string | undefined;
  priority: number;
  providerKey: string;
  accountId: string | null;
  tenantId: string | null;
  concurrencyKey: string | null;
  runAt: number;
  deadlineAt: number | null;
  createdAt: number;
  seq: number;
  status: TaskStatus;
  version: number;
  attempts: number;
  maxAttempts: number;
  idempotent: boolean;
  leaseOwner: string | null;
  leaseId: string | null;
  leaseUntil: number | null;
  /** As payload / payloadJson. */
  result: unknown;
  resultJson: string | undefined;
  error: string | null;
  externalId: string | null;
  nextPollAt: number | null;
  pollErrors: number;
  cancelRequested: boolean;
  updatedAt: number;
  finishedAt: number | null;

  // ---- bookkeeping (see memory-task-store.ts) ----
  /** Status code (STATUS_CODE). */
  sc: number;
  /** The lane of the task's admission keys; held while the task is not terminal, then null. */
  lane: Lane | null;
  queue: number;
  /**
   * Token of the live entry in the lane heap or the delayed heap (0 = none); a due task's entry
   * in its priority bucket carries the same token.
   */
  qTok: number;
  deadline: number;
  dTok: number;
  lease: number;
  lTok: number;
  poll: number;
  pTok: number;
  /** SUBMITTED / RUNNING whose lease expired but was not cleared yet (see claimPolls). */
  expiredLease: boolean;
  /** Creation rank (order-mode.ts): seq when no task before it has a later createdAt, else 0. */
  rank: number;
}

const SC_NEW = STATUS_CODE[TaskStatus.PENDING_SUBMIT];

export function newRecord(input: NewTask, now: number, seq: number, lane: Lane, rank: number): TaskRecord {
  const p = input.payload;
  const isObject = typeof p === 'object' && p !== null;
  return {
    id: input.id,
    idempotencyKey: input.idempotencyKey,
    type: input.type,
    payload: isObject ? undefined : p,
    payloadJson: isObject ? JSON.stringify(p) : undefined,
    priority: input.priority,
    providerKey: input.providerKey,
    accountId: input.accountId,
    tenantId: input.tenantId,
    concurrencyKey: input.concurrencyKey,
    runAt: now + input.delayMs,
    deadlineAt: input.timeoutMs === null ? null : now + input.timeoutMs,
    createdAt: now,
    seq,
    status: TaskStatus.PENDING_SUBMIT,
    version: 1,
    attempts: 0,
    maxAttempts: input.maxAttempts,
    idempotent: input.idempotent,
    leaseOwner: null,
    leaseId: null,
    leaseUntil: null,
    result: null,
    resultJson: undefined,
    error: null,
    externalId: null,
    nextPollAt: null,
    pollErrors: 0,
    cancelRequested: false,
    updatedAt: now,
    finishedAt: null,
    sc: SC_NEW,
    lane,
    queue: QUEUE_NONE,
    qTok: 0,
    deadline: DEADLINE_NONE,
    dTok: 0,
    lease: LEASE_NONE,
    lTok: 0,
    poll: POLL_NONE,
    pTok: 0,
    expiredLease: false,
    rank,
  };
}

/** Sets the result: objects are kept serialised, like payloads. */
export function setResult(r: TaskRecord, result: unknown): void {
  if (typeof result === 'object' && result !== null) {
    r.result = null;
    r.resultJson = JSON.stringify(result);
  } else {
    r.result = result === undefined ? null : result;
    r.resultJson = undefined;
  }
}

/**
 * A fresh Task object with the record's fields. Object payloads and results are stored as JSON
 * text and parsed for every copy, so no caller can reach (and mutate) what the store keeps; a
 * primitive payload (string, number, boolean, null) is immutable and shared as is.
 */
export function toTask(r: TaskRecord): Task {
  return copyWith(r, r.payloadJson === undefined ? r.payload : JSON.parse(r.payloadJson));
}

/** toTask with a given payload: create hands the caller's own input object back (never stored). */
export function toCreatedTask(r: TaskRecord, payload: unknown): Task {
  return copyWith(r, r.payloadJson === undefined ? r.payload : payload);
}

function copyWith(r: TaskRecord, payload: unknown): Task {
  return {
    id: r.id,
    idempotencyKey: r.idempotencyKey,
    type: r.type,
    payload,
    priority: r.priority,
    providerKey: r.providerKey,
    accountId: r.accountId,
    tenantId: r.tenantId,
    concurrencyKey: r.concurrencyKey,
    runAt: r.runAt,
    deadlineAt: r.deadlineAt,
    createdAt: r.createdAt,
    seq: r.seq,
    status: r.status,
    version: r.version,
    attempts: r.attempts,
    maxAttempts: r.maxAttempts,
    idempotent: r.idempotent,
    leaseOwner: r.leaseOwner,
    leaseId: r.leaseId,
    leaseUntil: r.leaseUntil,
    result: r.resultJson === undefined ? r.result : JSON.parse(r.resultJson),
    error: r.error,
    externalId: r.externalId,
    nextPollAt: r.nextPollAt,
    pollErrors: r.pollErrors,
    cancelRequested: r.cancelRequested,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
  };
}
