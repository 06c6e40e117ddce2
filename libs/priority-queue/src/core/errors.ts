import type { IdempotencyField } from './idempotency';
import { Messages } from './messages';

/**
 * Base class of every error the library throws on purpose. `code` is stable across releases
 * (match on it, not on the message or the class name): each class declares its own `static code`;
 * a subclass without one gets its class name in UPPER_SNAKE_CASE without the `Error` suffix.
 */
export class PriorityQueueError extends Error {
  static readonly code: string = 'PRIORITY_QUEUE_ERROR';
  readonly code: string;

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
    this.code = Object.prototype.hasOwnProperty.call(new.target, 'code') ? (new.target as { code: string }).code : codeOfName(new.target.name);
  }
}

function codeOfName(name: string): string {
  return name.replace(/Error$/, '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase() || 'PRIORITY_QUEUE_ERROR';
}

/** Bad input: nothing was written. `details` lists each problem found. */
export class ValidationError extends PriorityQueueError {
  static override readonly code: string = 'VALIDATION';
  constructor(message: string, readonly details: readonly string[] = []) {
    super(message);
  }
}

export class UnknownTaskTypeError extends ValidationError {
  static override readonly code: string = 'UNKNOWN_TASK_TYPE';
  constructor(readonly type: string, known: readonly string[]) {
    super(Messages.unknownType(type, known), [`type: unknown "${type}"`]);
  }
}

/**
 * An idempotency key was reused for a task of another type, tenant or payload (DESIGN §1).
 * Nothing of the submit (or of its whole submitMany batch) was written. `fields` lists what
 * differs; `taskId` is the task that holds the key; `index` the input of the batch (0 for submit).
 */
export class IdempotencyConflictError extends PriorityQueueError {
  static override readonly code: string = 'IDEMPOTENCY_CONFLICT';
  constructor(
    readonly key: string,
    readonly fields: readonly IdempotencyField[],
    readonly taskId: string,
    readonly index = 0,
  ) {
    super(Messages.idempotencyConflict(key, fields));
  }
}

export class TaskNotFoundError extends PriorityQueueError {
  static override readonly code: string = 'TASK_NOT_FOUND';
  constructor(readonly taskId: string) {
    super(Messages.taskNotFound(taskId));
  }
}

/** The task is not in a status where this operation applies. */
export class InvalidStateError extends PriorityQueueError {
  static override readonly code: string = 'INVALID_STATE';
}

/** A fenced write carried a lease id or version that is no longer current. */
export class StaleLeaseError extends PriorityQueueError {
  static override readonly code: string = 'STALE_LEASE';
  constructor(readonly taskId: string) {
    super(Messages.staleLease(taskId));
  }
}

/**
 * The abort reason a handler's signal carries when its lease is about to expire and could not be
 * renewed (the store did not answer the renewals): the recovery may soon give the task to another
 * worker, so the handler must stop. Its outcome is still written if the lease turns out to be ours.
 */
export class LeaseExpiredError extends PriorityQueueError {
  static override readonly code: string = 'LEASE_EXPIRED';
  constructor(readonly taskId: string, readonly leaseUntil: number) {
    super(Messages.leaseExpired(taskId, leaseUntil));
  }
}

/** The abort reason a handler's signal carries when its task's deadline passed (DESIGN §4). */
export class DeadlinePassedError extends PriorityQueueError {
  static override readonly code: string = 'DEADLINE_PASSED';
  constructor(readonly taskId: string, readonly deadlineAt: number) {
    super(Messages.deadlinePassed(taskId, deadlineAt));
  }
}

export class HandlerRegistrationError extends PriorityQueueError {
  static override readonly code: string = 'HANDLER_REGISTRATION';
}

export class StoreClosedError extends PriorityQueueError {
  static override readonly code: string = 'STORE_CLOSED';
  constructor() {
    super(Messages.storeClosed());
  }
}

/**
 * Thrown by a handler's submit when the provider certainly did not receive the request
 * (connection refused, 429 before processing, validation at the edge). The task is retried
 * even when the handler is not idempotent.
 */
export class NotSubmittedError extends PriorityQueueError {
  static override readonly code: string = 'NOT_SUBMITTED';
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

/** Thrown by a handler when retrying cannot help: the task fails at once. */
export class PermanentError extends PriorityQueueError {
  static override readonly code: string = 'PERMANENT';
}

/** A task type submitted through the manager of a queue it does not belong to. Nothing was written. */
export class WrongQueueError extends ValidationError {
  static override readonly code: string = 'WRONG_QUEUE';
  constructor(
    readonly type: string,
    readonly queue: string,
    readonly ownerQueue: string,
  ) {
    super(Messages.wrongQueue(type, queue, ownerQueue), [`type: "${type}" belongs to queue "${ownerQueue}"`]);
  }
}

/** waitFor() gave up before the task reached a terminal status (the task itself is unchanged). */
export class WaitTimeoutError extends PriorityQueueError {
  static override readonly code: string = 'WAIT_TIMEOUT';
  constructor(
    readonly taskId: string,
    readonly timeoutMs: number,
    readonly lastStatus: string | null,
  ) {
    super(Messages.waitTimeout(taskId, timeoutMs, lastStatus));
  }
}

/** The module or a store is set up in a way that cannot work (found at start-up). */
export class ConfigurationError extends PriorityQueueError {
  static override readonly code: string = 'CONFIGURATION';
}

/** The store's server could not be reached (e.g. Redis down at start-up past initTimeoutMs). */
export class StoreUnavailableError extends PriorityQueueError {
  static override readonly code: string = 'STORE_UNAVAILABLE';
}

/** A queue name that no registerQueue() / forRoot() registered in this application. */
export class QueueNotFoundError extends PriorityQueueError {
  static override readonly code: string = 'QUEUE_NOT_FOUND';
  constructor(
    readonly queue: string,
    known: readonly string[],
  ) {
    super(Messages.queueNotFound(queue, known));
  }
}

/** A change asked of something that only reads (the dashboard with readOnly: true). Nothing was changed. */
export class ReadOnlyError extends PriorityQueueError {
  static override readonly code: string = 'READ_ONLY';
  constructor(message: string = Messages.dashboardReadOnly()) {
    super(message);
  }
}

/**
 * The store cannot do what was asked yet (a scheduling policy of DESIGN §7 on a store that does
 * not implement it). Thrown by its constructor, create or setLimits; nothing was written.
 */
export class NotSupportedByStoreError extends ConfigurationError {
  static override readonly code: string = 'NOT_SUPPORTED_BY_STORE';
  constructor(
    readonly feature: string,
    readonly store: string,
  ) {
    super(Messages.notSupportedByStore(feature, store));
  }
}

/** A fair tag would pass MAX_FAIR_TAG (core/fairness.ts); nothing was written. */
export class FairTagOverflowError extends PriorityQueueError {
  static override readonly code: string = 'FAIR_TAG_OVERFLOW';
  constructor() {
    super(Messages.fairTagOverflow());
  }
}
