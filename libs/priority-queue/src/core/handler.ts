import type { BoostOptions } from './boost';
import type { RemovalOptions } from './removal';
import type { Task } from './task';

/** Options of a task type, given to @PriorityTask or to the core registry. */
export interface TaskTypeOptions extends RemovalOptions {
  /** Provider the task calls; default: the type itself. */
  providerKey?: string;
  /** Submitting twice is harmless (default true). Decides recovery of a lost submit. */
  idempotent?: boolean;
  /** Submit attempts before FAILED (default 5). */
  maxAttempts?: number;
  /**
   * Default overall deadline of a task of this type (waiting, submitting, polling); none by
   * default. A handler still running at the deadline is aborted and the task ends TIMED_OUT.
   */
  timeoutMs?: number;
  /** Default priority when the submit gives none (default 0). */
  defaultPriority?: number;
  /** Retry back-off of failed submits: base * 2^(attempts-1), capped, with full jitter. */
  backoff?: { baseMs?: number; maxMs?: number };
  /** First poll this long after the provider accepted (default 1000). */
  pollIntervalMs?: number;
  /** Cap of the poll back-off after poll errors (default 60000). */
  maxPollIntervalMs?: number;
  /**
   * Deadline boost (DESIGN §7): `beforeDeadlineMs` before its deadline a task still waiting takes
   * `priority` if its own is lower. Needs a deadline (timeoutMs here, or on each submit); a submit
   * may give its own boost, or null for none.
   */
  boost?: BoostOptions;
  // removeOnComplete / removeOnFail (core/removal.ts): override the queue's for this type
}

export interface HandlerContext<P = unknown> {
  task: Task<P>;
  payload: P;
  /**
   * Aborted when the lease is lost, when it is about to expire because the store did not answer
   * its renewals (reason: a LeaseExpiredError), when the task's deadline passes (reason: a
   * DeadlinePassedError; the task ends TIMED_OUT and whatever the handler returns later is
   * discarded), or when the worker shuts down past its grace period.
   */
  signal: AbortSignal;
}

export interface PollContext<P = unknown> extends HandlerContext<P> {
  externalId: string;
}

export type PollResult<R = unknown> =
  | { done: false; nextPollMs?: number }
  | { done: true; result?: R }
  | { done: true; failed: string };

/**
 * A handler is either one-shot (`run`) or a provider handler (`submit` + `poll`, optional
 * `cancel`). Errors: throw NotSubmittedError when the provider surely did not see a submit,
 * PermanentError when retrying cannot help. `cancel` is called once with the external id when a
 * job the provider accepted is not wanted any more: a cancel request, or the task's deadline.
 */
export interface TaskHandler<P = unknown, R = unknown> {
  run?(ctx: HandlerContext<P>): Promise<R> | R;
  submit?(ctx: HandlerContext<P>): Promise<string | { externalId: string }> | string | { externalId: string };
  poll?(ctx: PollContext<P>): Promise<PollResult<R>> | PollResult<R>;
  cancel?(ctx: PollContext<P>): Promise<void> | void;
}

export interface ResolvedTaskType {
  type: string;
  providerKey: string;
  idempotent: boolean;
  maxAttempts: number;
  timeoutMs: number | null;
  defaultPriority: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  boost: BoostOptions | null;
  /** The type's own removeOnComplete / removeOnFail (the queue's apply where unset: TaskTypeRegistry.removal). */
  removal: RemovalOptions;
}

export const TASK_TYPE_DEFAULTS = {
  idempotent: true,
  maxAttempts: 5,
  defaultPriority: 0,
  backoffBaseMs: 1000,
  backoffMaxMs: 60_000,
  pollIntervalMs: 1000,
  maxPollIntervalMs: 60_000,
} as const;
