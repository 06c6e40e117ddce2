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
 * Never handed out: callers get `toTask(record)`.
 */
export class TaskRecord {
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
  status: TaskStatus = TaskStatus.PENDING_SUBMIT;
  version = 1;
  attempts = 0;
  maxAttempts: number;
  idempotent: boolean;
  leaseOwner: string | null = null;
  leaseId: string | null = null;
  leaseUntil: number | null = null;
  /** As payload / payloadJson. */
  result: unknown = null;
  resultJson: string | undefined = undefined;
  error: string | null = null;
  externalId: string | null = null;
  nextPollAt: number | null = null;
  pollErrors = 0;
  cancelRequested = false;
  updatedAt: number;
  finishedAt: number | null = null;

  // ---- bookkeeping (see memory-task-store.ts) ----
  /** Status code (STATUS_CODE). */
  sc: number = STATUS_CODE[TaskStatus.PENDING_SUBMIT];
  /** The lane of the task's admission keys; held while the task is not terminal, then null. */
  lane: Lane | null;
  queue = QUEUE_NONE;
  /** Token of the live entry in the lane heap or the delayed heap (0 = none). */
  qTok = 0;
  /** Token of the live entry in the priority bucket's due heap (0 = none). */
  bTok = 0;
  deadline = DEADLINE_NONE;
  dTok = 0;
  lease = LEASE_NONE;
  lTok = 0;
  poll = POLL_NONE;
  pTok = 0;
  /** SUBMITTED / RUNNING whose lease expired but was not cleared yet (see claimPolls). */
  expiredLease = false;

  constructor(input: NewTask, now: number, seq: number, lane: Lane) {
    this.id = input.id;
    this.idempotencyKey = input.idempotencyKey;
    this.type = input.type;
    const payload = input.payload;
    if (typeof payload === 'object' && payload !== null) {
      this.payload = undefined;
      this.payloadJson = JSON.stringify(payload);
    } else {
      this.payload = payload;
      this.payloadJson = undefined;
    }
    this.priority = input.priority;
    this.providerKey = input.providerKey;
    this.accountId = input.accountId;
    this.tenantId = input.tenantId;
    this.concurrencyKey = input.concurrencyKey;
    this.runAt = now + input.delayMs;
    this.deadlineAt = input.timeoutMs === null ? null : now + input.timeoutMs;
    this.createdAt = now;
    this.seq = seq;
    this.maxAttempts = input.maxAttempts;
    this.idempotent = input.idempotent;
    this.updatedAt = now;
    this.lane = lane;
  }
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
  return {
    id: r.id,
    idempotencyKey: r.idempotencyKey,
    type: r.type,
    payload: r.payloadJson === undefined ? r.payload : JSON.parse(r.payloadJson),
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
