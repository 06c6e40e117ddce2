import type { BoostOptions } from './boost';

/**
 * Lifecycle of a task (DESIGN §1). Both a value (`TaskStatus.FAILED`) and a string literal type:
 * `'FAILED'` is a TaskStatus too, so `list('FAILED')` and `task.status === 'FAILED'` compile.
 * `TaskStatus.FAILED` also names the type of that one status.
 */
export const TaskStatus = {
  PENDING_SUBMIT: 'PENDING_SUBMIT',
  SUBMITTING: 'SUBMITTING',
  SUBMITTED: 'SUBMITTED',
  RUNNING: 'RUNNING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  CANCELED: 'CANCELED',
  TIMED_OUT: 'TIMED_OUT',
  SUBMIT_UNKNOWN: 'SUBMIT_UNKNOWN',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];
// A type-only namespace (no runtime code): `TaskStatus.SUBMITTED` as a type, as with an enum.
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace TaskStatus {
  type PENDING_SUBMIT = typeof TaskStatus.PENDING_SUBMIT;
  type SUBMITTING = typeof TaskStatus.SUBMITTING;
  type SUBMITTED = typeof TaskStatus.SUBMITTED;
  type RUNNING = typeof TaskStatus.RUNNING;
  type SUCCEEDED = typeof TaskStatus.SUCCEEDED;
  type FAILED = typeof TaskStatus.FAILED;
  type CANCELED = typeof TaskStatus.CANCELED;
  type TIMED_OUT = typeof TaskStatus.TIMED_OUT;
  type SUBMIT_UNKNOWN = typeof TaskStatus.SUBMIT_UNKNOWN;
}

export const ALL_STATUSES: readonly TaskStatus[] = Object.values(TaskStatus);

/** Statuses that hold an admission slot (account, tenant, concurrency key). */
export const IN_FLIGHT_STATUSES: readonly TaskStatus[] = [
  TaskStatus.SUBMITTING,
  TaskStatus.SUBMITTED,
  TaskStatus.RUNNING,
];

export const TERMINAL_STATUSES: readonly TaskStatus[] = [
  TaskStatus.SUCCEEDED,
  TaskStatus.FAILED,
  TaskStatus.CANCELED,
  TaskStatus.TIMED_OUT,
  TaskStatus.SUBMIT_UNKNOWN,
];

export type TerminalStatus =
  | TaskStatus.SUCCEEDED
  | TaskStatus.FAILED
  | TaskStatus.CANCELED
  | TaskStatus.TIMED_OUT
  | TaskStatus.SUBMIT_UNKNOWN;

export function isTerminal(status: TaskStatus): status is TerminalStatus {
  return TERMINAL_STATUSES.includes(status);
}

export function isInFlight(status: TaskStatus): boolean {
  return IN_FLIGHT_STATUSES.includes(status);
}

/** Plain JSON value: what a payload or a result may hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A task as every store returns it. Times are epoch milliseconds of the STORE clock.
 * Stores return fresh objects; callers may not mutate what a store keeps.
 */
export interface Task<P = unknown, R = unknown> {
  id: string;
  /** Caller-supplied idempotency key, unique among live (not purged) tasks. */
  idempotencyKey: string | null;
  type: string;
  payload: P;
  /** int32, larger first. */
  priority: number;
  providerKey: string;
  accountId: string | null;
  tenantId: string | null;
  concurrencyKey: string | null;
  /** Earliest submit time (store now + delayMs at creation, or the retry time). */
  runAt: number;
  /** Overall deadline (waiting + submitting + polling); null = none. */
  deadlineAt: number | null;
  /**
   * Deadline boost (core/boost.ts): from this time on a claim moves the task, if still
   * PENDING_SUBMIT, up to `boostPriority`; both null when the task has none. Fixed at create.
   */
  boostAt: number | null;
  boostPriority: number | null;
  /**
   * Fair tag (core/fairness.ts) on a store with `fairness: 'tenant'`, else null: an unsigned
   * integer below 2^63 as a decimal string (exact beyond 2^53). Set at create, again by a
   * priority change to another level.
   */
  fairTag: string | null;
  createdAt: number;
  /** Store-wide monotonic sequence, the final tie-break. */
  seq: number;
  status: TaskStatus;
  /** Bumped by every state change; part of the fence of a lease holder. */
  version: number;
  /**
   * Failed submit attempts so far, the last one too (handler error, PermanentError, unknown
   * outcome, expired submit lease, deadline during the submit).
   */
  attempts: number;
  maxAttempts: number;
  /** Whether submitting twice is harmless; decides recovery of an expired submit lease. */
  idempotent: boolean;
  leaseOwner: string | null;
  /** Fencing token of the current lease; null when no lease is held. */
  leaseId: string | null;
  leaseUntil: number | null;
  result: R | null;
  error: string | null;
  externalId: string | null;
  /** When a SUBMITTED / RUNNING task is next due for a poll; null once terminal. */
  nextPollAt: number | null;
  /** Consecutive poll errors (drives the poll back-off); reset by a successful poll. */
  pollErrors: number;
  /** Set by cancel() on a claimed task; the worker finalises it as CANCELED. */
  cancelRequested: boolean;
  updatedAt: number;
  /** When the task reached a terminal status; null until then. */
  finishedAt: number | null;
}

/**
 * What the queue hands a store to create. Everything is already validated and defaulted by
 * core/queue.ts; the store adds id-independent lifecycle fields and reads its own clock for
 * runAt / deadlineAt / createdAt.
 */
export interface NewTask {
  id: string;
  idempotencyKey: string | null;
  type: string;
  payload: unknown;
  priority: number;
  providerKey: string;
  accountId: string | null;
  tenantId: string | null;
  concurrencyKey: string | null;
  /** runAt = store now + delayMs. */
  delayMs: number;
  /** deadlineAt = store now + timeoutMs; null = no deadline. */
  timeoutMs: number | null;
  /**
   * Deadline boost (core/boost.ts), already resolved by the queue (resolveBoost): only with a
   * timeoutMs above its beforeDeadlineMs. Absent or null = none.
   */
  boost?: BoostOptions | null;
  maxAttempts: number;
  idempotent: boolean;
  /**
   * With an idempotencyKey: core/idempotency.ts payloadFingerprint(payload), computed once by the
   * queue. Stores read it through scopeOf(), which computes it when absent (a direct store call).
   */
  payloadFingerprint?: string;
}

/** Identity of a lease holder: every fenced write must present all three. */
export interface Fence {
  id: string;
  leaseId: string;
  version: number;
}

export function fenceOf(task: Pick<Task, 'id' | 'leaseId' | 'version'>): Fence {
  if (task.leaseId === null) throw new Error(`task ${task.id} holds no lease`);
  return { id: task.id, leaseId: task.leaseId, version: task.version };
}

/** One state change, as reported by store operations that change several tasks. */
export interface Transition {
  task: Task;
  from: TaskStatus;
  to: TaskStatus;
}

/** The task a store writes for `input` at store time `now` with sequence `seq` (DESIGN §1). */
export function newTaskRecord<P = unknown>(input: NewTask, now: number, seq: number, payload: P = input.payload as P): Task<P> {
  const deadlineAt = input.timeoutMs === null ? null : now + input.timeoutMs;
  const boost = deadlineAt === null ? null : (input.boost ?? null);
  return {
    id: input.id,
    idempotencyKey: input.idempotencyKey,
    type: input.type,
    payload: payload === undefined ? (null as P) : payload,
    priority: input.priority,
    providerKey: input.providerKey,
    accountId: input.accountId,
    tenantId: input.tenantId,
    concurrencyKey: input.concurrencyKey,
    runAt: now + input.delayMs,
    deadlineAt,
    boostAt: boost === null ? null : deadlineAt! - boost.beforeDeadlineMs, // boost.ts boostAtOf
    boostPriority: boost === null ? null : boost.priority,
    fairTag: null,
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
    error: null,
    externalId: null,
    nextPollAt: null,
    pollErrors: 0,
    cancelRequested: false,
    updatedAt: now,
    finishedAt: null,
  };
}
