import type { IdempotencyField } from './idempotency';
import { Messages } from './messages';

/** Base class of every error the library throws on purpose. */
export class PriorityQueueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Bad input: nothing was written. `details` lists each problem found. */
export class ValidationError extends PriorityQueueError {
  constructor(message: string, readonly details: readonly string[] = []) {
    super(message);
  }
}

export class UnknownTaskTypeError extends ValidationError {
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
  constructor(readonly taskId: string) {
    super(Messages.taskNotFound(taskId));
  }
}

/** The task is not in a status where this operation applies. */
export class InvalidStateError extends PriorityQueueError {}

/** A fenced write carried a lease id or version that is no longer current. */
export class StaleLeaseError extends PriorityQueueError {
  constructor(readonly taskId: string) {
    super(Messages.staleLease(taskId));
  }
}

/** The abort reason a handler's signal carries when its task's deadline passed (DESIGN §4). */
export class DeadlinePassedError extends PriorityQueueError {
  constructor(readonly taskId: string, readonly deadlineAt: number) {
    super(Messages.deadlinePassed(taskId, deadlineAt));
  }
}

export class HandlerRegistrationError extends PriorityQueueError {}

export class StoreClosedError extends PriorityQueueError {
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
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

/** Thrown by a handler when retrying cannot help: the task fails at once. */
export class PermanentError extends PriorityQueueError {}
