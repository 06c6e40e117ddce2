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
