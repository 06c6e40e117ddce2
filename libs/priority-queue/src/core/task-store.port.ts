// Above ~400 lines on purpose: the port is one interface whose doc comments are the contract every
// store is held to (test/contract); its request and answer types sit beside the methods using them.
import type { LimitUpdate, LimitsSnapshot } from './admission';
import type { TaskExplanation } from './explain';
import type { TaskHistoryEntry } from './history';
import type { RemovalRule } from './removal';
import type { TaskPage, TaskQuery } from './task-query';
import type { Fairness } from './fairness';
import type { Fence, NewTask, Task, TaskStatus, TerminalStatus, Transition } from './task';

/**
 * What a wake-up of subscribe() announces. 'submissions': only tasks to submit may have become
 * claimable (a create): a worker claims submissions and leaves polls to their timers, which
 * saves one round trip per woken idle worker (a create's wake-up reaches every worker of the
 * queue in every process).
 */
export type WakeReason = 'submissions';

/**
 * The port every store implements (memory, Redis, TypeORM). The shared contract suite in
 * test/contract checks every rule below against each store.
 *
 * General rules:
 * - Every state change is atomic and bumps `version` (creation sets version 1).
 * - Times are the store clock's epoch ms (`now()`); a store built with a `clock` option uses it.
 * - Fenced operations take a `Fence` (id + leaseId + version from the task the caller holds) and
 *   throw `StaleLeaseError` when the task's current leaseId or version differ; nothing changes.
 *   They return the task as written (new version).
 * - Admission slots (account, tenant, concurrency key) are held by tasks in SUBMITTING,
 *   SUBMITTED, RUNNING; each status change in or out of that set takes or frees the slots in
 *   the same atomic step.
 * - Every terminal transition (complete, retry or release into CANCELED, recoverExpired, a
 *   claim's timeouts, cancel) clears nextPollAt and the lease.
 */
export interface TaskStore {
  /** Creates schema / loads scripts; idempotent. */
  init(): Promise<void>;
  /** Releases connections the store opened itself (never a connection the user passed in). */
  close(): Promise<void>;

  /** The store clock (Redis TIME, SQL now(), or the injected clock). */
  now(): Promise<number>;

  /** Ordering mode, fixed for the store's life; the order key of every index depends on it. */
  readonly agingIntervalMs: number;

  /** Transitions history() keeps per task (the store option, or its store's default); 0 = none. */
  readonly historyLimit: number;

  /**
   * Fair share between tenants (DESIGN §7, core/fairness.ts), fixed for the store's life like
   * agingIntervalMs; null or absent = off. With 'tenant' every task gets a fair tag at create and
   * the order of claims is priority desc, fair tag asc, runAt, createdAt, seq.
   */
  readonly fairness?: Fairness | null;

  /**
   * The scheduling policies of DESIGN §7 this store implements; absent = none. A store without
   * one refuses to use it with NotSupportedByStoreError (fairness: at construction; a boost: at
   * create; a tenant weight: at setLimits), never ignores it.
   */
  readonly policies?: StorePolicies;

  /**
   * Creates tasks in one atomic step (all or none). For an input whose idempotencyKey already
   * exists (in the store or earlier in the same batch), no task is created and the existing
   * one is returned with created = false. Results are in input order. New tasks are
   * PENDING_SUBMIT, version 1, attempts 0, runAt = now + delayMs, deadlineAt = now + timeoutMs
   * (or null), createdAt = now, seq = the next value of a store-wide increasing sequence.
   */
  create(tasks: readonly NewTask[]): Promise<CreateResult[]>;

  /**
   * Optional fast path of create() for one task (PriorityQueue.submit): exactly
   * `(await create([task]))[0]`, without the arrays. Stores without it are called through create().
   */
  createOne?(task: NewTask): Promise<CreateResult>;

  /**
   * Optional: the id for the next task PriorityQueue submits to this store (synchronous, never
   * the same twice). A store that indexes its tasks by ids it made (core/task-ids.ts) makes them;
   * for any other store PriorityQueue makes them. create() still takes any valid id.
   */
  newTaskId?(): string;

  get(id: string): Promise<Task | null>;

  /** Tasks of one status, oldest seq first, paged by seq (exclusive `afterSeq`). */
  list(query: ListQuery): Promise<Task[]>;

  /**
   * Claims up to `limit` PENDING_SUBMIT tasks with runAt <= now, each time the FIRST admissible
   * candidate in the order of DESIGN §2 (see order-key.ts), applying every limit of
   * DESIGN §3 with all claims of the batch counted against the next. Claimed tasks become
   * SUBMITTING with leaseOwner = owner, a fresh leaseId, leaseUntil = now + leaseMs, version+1;
   * each takes one unit of every limit of its lane (slots and one rate token).
   *
   * A candidate whose deadlineAt <= now is not submitted: it becomes TIMED_OUT in the same step
   * (no admission check, no token) and is reported in `timedOut`; it does not count toward
   * `limit`. Refused candidates never stop later admissible ones (no head-of-line blocking).
   *
   * `nextWakeAt`: a hint of the earliest future time at which a claim could succeed without any
   * other change (next delayed runAt, next rate token of a blocked provider); null = unknown / none.
   *
   * Deadline boosts (core/boost.ts) fire first, in the same atomic step: every boost with
   * boostAt <= now not fired yet, in boostAt then seq order; the tasks whose priority they raised
   * are reported in `boosted` as the boost wrote them (before this claim took any of them).
   */
  claimSubmissions(request: ClaimRequest): Promise<SubmissionClaim>;

  /**
   * Claims up to `limit` SUBMITTED / RUNNING tasks with (nextPollAt <= now or cancelRequested)
   * and no live lease (leaseUntil null or <= now), earliest nextPollAt first. Sets a lease as
   * claimSubmissions does; status and slots do not change. No admission applies.
   */
  claimPolls(request: ClaimRequest): Promise<Task[]>;

  /** Extends a held lease to now + leaseMs. Fenced. */
  renewLease(fence: Fence, leaseMs: number): Promise<Task>;

  /**
   * The provider accepted a submit: SUBMITTING -> SUBMITTED (or RUNNING), externalId set,
   * nextPollAt = now + pollDelayMs, lease cleared; slots stay held. Fenced.
   */
  markSubmitted(fence: Fence, outcome: SubmittedOutcome): Promise<Task>;

  /**
   * A poll said "not done yet" (or failed): status becomes `status` (RUNNING or SUBMITTED),
   * nextPollAt = now + nextPollDelayMs, pollErrors set, lease cleared. Fenced.
   */
  recordPoll(fence: Fence, outcome: PollOutcome): Promise<Task>;

  /**
   * Terminal transition from a held lease: status, result / error, finishedAt = now, lease
   * cleared, nextPollAt cleared, slots freed when the task held them; attempts + 1 in the same
   * step when `outcome.attempt` (a failed submit attempt). Fenced.
   * With `outcome.remove` (core/removal.ts) the task is deleted in the same atomic step (rule
   * `now`), or the step deletes the finished tasks of the same type and side beyond the rule's
   * count / age (at most REMOVAL_TRIM_MAX, oldest first; this task counts too): a deleted task
   * is gone as purge() leaves it (get() null, its idempotency key free). The task returned is
   * the one written either way.
   */
  complete(fence: Fence, outcome: CompletionOutcome): Promise<Task>;

  /**
   * Optional: a batch of complete() calls, then one claimSubmissions(), in ONE store round trip
   * (BullMQ's move-to-finished-and-fetch-next): exactly as if each `completes[i]` were passed to
   * complete() in order and then `claim` to claimSubmissions(), so the claim sees the slots those
   * completes freed. Each complete succeeds or fails on its own (a stale fence refuses only that
   * one, with the error complete() would throw, and never stops the claim); `completed[i]` is its
   * answer. Stores without it: the worker calls complete() and claimSubmissions() apart.
   *
   * A lost reply (the call ran, its answer did not arrive) is what it is for the two calls made
   * apart: a complete sent again is refused (its fence moved, or the task is gone); the claimed
   * tasks, never handed to a handler, stay leased to the caller until the lease expires and
   * recovery takes them (recoverExpired: one failed attempt counted). A store does not claim
   * twice for one call; a client that re-sends the call (ioredis after a reconnect) claims a
   * second batch, and the first one goes to recovery as above.
   */
  completeAndClaim?(completes: readonly CompleteCall[], claim: ClaimRequest): Promise<CompleteAndClaimResult>;

  /**
   * A failed submit that will be tried again: SUBMITTING -> PENDING_SUBMIT, attempts + 1,
   * runAt = now + delayMs, error recorded, lease cleared, slots freed. Priority unchanged. Fenced.
   * A task with cancelRequested becomes CANCELED instead (terminal; the failed attempt is
   * counted all the same).
   */
  retry(fence: Fence, outcome: RetryOutcome): Promise<Task>;

  /**
   * The holder gives a claimed task back untouched (it never started, so no provider saw it,
   * e.g. a worker's prefetched task at stop()): SUBMITTING -> PENDING_SUBMIT with attempts,
   * runAt, priority and error unchanged, lease cleared, slots freed; it competes again exactly
   * as before the claim. Fenced. A task with cancelRequested becomes CANCELED instead (terminal).
   */
  release(fence: Fence): Promise<Task>;

  /**
   * Recovers up to `limit` tasks in one sweep, any worker may call it:
   * - SUBMITTING with leaseUntil <= now: a failed submit attempt, so attempts + 1 whatever comes
   *   next: idempotent -> PENDING_SUBMIT (runAt unchanged), or FAILED when attempts (counted)
   *   >= maxAttempts; non-idempotent -> SUBMIT_UNKNOWN. Slots are freed. An idempotent one with
   *   cancelRequested becomes CANCELED instead.
   * - SUBMITTED / RUNNING with leaseUntil <= now: lease cleared (the poll is retried); status
   *   unchanged; not reported.
   * - any non-terminal task with deadlineAt <= now and no live lease -> TIMED_OUT (slots freed,
   *   nextPollAt cleared). A provider task timed out here from SUBMITTED / RUNNING is the
   *   caller's to cancel at the provider (the worker calls its handler's cancel hook).
   * Returns the status transitions made.
   */
  recoverExpired(limit: number): Promise<Transition[]>;

  /**
   * PENDING_SUBMIT -> CANCELED at once. SUBMITTING / SUBMITTED / RUNNING: sets cancelRequested
   * (version+1), the worker finalises it through claimPolls. Terminal: unchanged. Returns the
   * task after the change, or null when it does not exist.
   */
  cancel(id: string): Promise<Task | null>;

  /**
   * PENDING_SUBMIT only (else InvalidStateError; missing -> TaskNotFoundError): sets priority
   * atomically with every index, version + 1. With fairness, a change to another level re-tags
   * the task as a create at that level would (core/fairness.ts). A boost of the task that is due
   * and has not fired fires first without effect: the explicit priority wins (core/boost.ts).
   */
  changePriority(id: string, priority: number): Promise<Task>;

  stats(): Promise<QueueStats>;

  getLimits(): Promise<LimitsSnapshot>;
  /** Applies one change atomically; freeing room (limit raised, provider resumed) takes effect at the next claim. */
  setLimits(update: LimitUpdate): Promise<LimitsSnapshot>;

  /** Deletes up to `limit` terminal tasks with finishedAt <= olderThan; returns the count. */
  purge(olderThan: number, limit: number): Promise<number>;

  // ---- operations (dashboard, TaskManager.retry / explain / history / query)

  /**
   * Puts a FAILED, TIMED_OUT, CANCELED or SUBMIT_UNKNOWN task back to PENDING_SUBMIT as a fresh
   * attempt, atomically with every index (core/requeue.ts says what changes: attempts 0,
   * runAt = now, priority kept, error / result / externalId / nextPollAt / finishedAt cleared,
   * version + 1). Any other status -> InvalidStateError (nothing changes); missing ->
   * TaskNotFoundError. Returns the transition made. Slots are not touched (a finished task
   * holds none); the idempotency key keeps naming the task.
   */
  requeue(id: string): Promise<Transition>;

  /**
   * Why the task is not running now (core/explain.ts): decided with laneRefusal over the
   * store's current limits, GCRA state and slots in use as the next claim would see them.
   * `ahead` counts due PENDING_SUBMIT tasks ranked before it in lanes admissible now, up to
   * EXPLAIN_AHEAD_CAP (+1 to know it was capped). Missing -> TaskNotFoundError. Reads only
   * (a store may move due delayed tasks into their lanes first, as a claim would).
   */
  explain(id: string): Promise<TaskExplanation>;

  /**
   * The task's last `historyLimit` status transitions, oldest first (core/history.ts), each
   * written in the same atomic step as its transition; [] when the store keeps no history
   * (historyLimit 0). Purge removes them with the task. Missing -> TaskNotFoundError.
   */
  history(id: string): Promise<TaskHistoryEntry[]>;

  /**
   * One page of tasks of a status with filters (core/task-query.ts: order, cursor, early pages).
   * Checked first with validateTaskQuery (ValidationError, nothing read).
   */
  query(query: TaskQuery): Promise<TaskPage>;

  /**
   * Optional: recoverExpired under the queue's sweep lease, so that the workers of a queue (in
   * any number of processes) sweep once per lease period between them, not once each:
   * - a sweep lease is live (taken by anyone, this caller included, less than its leaseMs ago
   *   in store time): returns null and changes nothing;
   * - else nothing is due for recovery (no task recoverExpired would change): returns [] and
   *   takes no lease;
   * - else takes the lease (until now + leaseMs, `owner` recorded) and recovers as
   *   recoverExpired(limit) does, returning its transitions.
   * The lease is never released: it lapses, so a holder that dies delays the next sweep by at
   * most leaseMs. Stores without it: every worker calls recoverExpired.
   */
  sweepExpired?(request: SweepRequest): Promise<Transition[] | null>;

  /**
   * Optional: calls `listener` soon after work may have become claimable anywhere in the
   * cluster (a create, a freed slot, a resume, a recovered task), and once after a lost
   * connection is back (what was sent meanwhile is lost). Returns an unsubscribe function.
   * Calls may be spurious; a wake-up may be lost (a pub/sub message is sent once): workers
   * keep a slow safety poll (see idlePollMs). `what` narrows a call down when the store knows
   * more (WakeReason); without it, anything may have changed.
   */
  subscribe?(listener: (what?: WakeReason) => void): Promise<() => Promise<void>>;

  /**
   * Optional: the safety poll this store advises for idle workers (their default idlePollMs,
   * ms): long when subscribe() reads durable state on a timer and so cannot miss a change.
   * Unset: 5 s with subscribe(), 250 ms without.
   */
  readonly idlePollMs?: number;

  /**
   * Optional: true when a call does not wait for the calls made before it: a pool of connections
   * runs them at once (PostgreSQL, MySQL / MariaDB), or there is no I/O (memory). The Worker then
   * sends its completes and its next claim apart, side by side: completeAndClaim would make the
   * claim wait for the completes and save nothing. Unset: one call at a time (one connection:
   * Redis, SQLite), a claim waits for the completes sent before it anyway, so the Worker sends a
   * turn's completes with its claim (completeAndClaim, one round trip instead of two).
   */
  readonly parallelCalls?: boolean;
}

export interface SweepRequest {
  /** Recorded with the lease (who swept last). */
  owner: string;
  /** Length of the lease; a worker passes its sweep period. */
  leaseMs: number;
  /** Most tasks recovered, as recoverExpired's limit. */
  limit: number;
}

export interface CreateResult {
  task: Task;
  created: boolean;
}

export interface ListQuery {
  status: TaskStatus;
  limit: number;
  afterSeq?: number;
}

export interface ClaimRequest {
  owner: string;
  limit: number;
  leaseMs: number;
}

export interface SubmissionClaim {
  claimed: Task[];
  timedOut: Task[];
  nextWakeAt: number | null;
  /** Tasks whose deadline boost raised their priority at the start of this claim (absent = none). */
  boosted?: BoostedTask[];
}

/** A task as its deadline boost wrote it (PENDING_SUBMIT, the boost's priority) and its priority before. */
export interface BoostedTask {
  task: Task;
  fromPriority: number;
}

/** Which scheduling policies of DESIGN §7 a store implements. */
export interface StorePolicies {
  fairness: boolean;
  boost: boolean;
}

export interface SubmittedOutcome {
  externalId: string;
  status: TaskStatus.SUBMITTED | TaskStatus.RUNNING;
  pollDelayMs: number;
}

export interface PollOutcome {
  status: TaskStatus.SUBMITTED | TaskStatus.RUNNING;
  nextPollDelayMs: number;
  pollErrors: number;
  error?: string | null;
}

export interface CompletionOutcome {
  status: TerminalStatus;
  result?: unknown;
  error?: string | null;
  /**
   * This completion ends a failed submit attempt (the handler's last error, a PermanentError,
   * an unknown outcome, a deadline that passed while submit() ran): attempts + 1, atomically
   * with the transition. Default false (a success, a poll's outcome, a cancel).
   */
  attempt?: boolean;
  /** removeOnComplete / removeOnFail of the task's type for this status (core/removal.ts); none = keep. */
  remove?: RemovalRule | null;
}

/** One complete() of a completeAndClaim batch. */
export interface CompleteCall {
  fence: Fence;
  outcome: CompletionOutcome;
}

/** One complete()'s answer: the task as written, or the error complete() would have thrown. */
export type CompleteAnswer = { task: Task; error?: undefined } | { task?: undefined; error: Error };

export interface CompleteAndClaimResult {
  /** One answer per complete call, in the calls' order. */
  completed: CompleteAnswer[];
  claim: SubmissionClaim;
}

export interface RetryOutcome {
  delayMs: number;
  error: string;
}

export interface PendingPriorityStats {
  priority: number;
  /** Due and not-yet-due PENDING_SUBMIT tasks of this priority. */
  count: number;
  /** now - min(runAt) over the DUE tasks of this priority; 0 when none is due. */
  oldestWaitMs: number;
}

export interface QueueStats {
  now: number;
  byStatus: Record<TaskStatus, number>;
  /** Sorted by priority descending. */
  pending: PendingPriorityStats[];
  inFlightByProvider: Record<string, number>;
  inFlightByAccount: Array<{ providerKey: string; accountId: string; count: number }>;
  inFlightByTenant: Record<string, number>;
  inFlightByConcurrencyKey: Record<string, number>;
}

/** Options every store constructor accepts. */
export interface StoreOptions {
  /** DESIGN §2 aging; 0 or undefined = off. At most MAX_AGING_INTERVAL_MS. */
  agingIntervalMs?: number;
  /** DESIGN §7 fair share between tenants; undefined = off. Not together with aging. */
  fairness?: Fairness | null;
  /** Test clock: when set, the store uses it instead of its server's time. */
  clock?: Clock;
  /**
   * Status transitions kept per task for history() (0 = off, at most MAX_HISTORY_LIMIT). Default
   * DEFAULT_HISTORY_LIMIT on the memory and TypeORM stores, 0 on Redis (its cost there: README).
   * TypeORM: fixed per task when it is created.
   */
  historyLimit?: number;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current = 1_700_000_000_000) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}
