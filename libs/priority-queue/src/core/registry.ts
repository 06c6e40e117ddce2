import { HandlerRegistrationError, UnknownTaskTypeError, WrongQueueError } from './errors';
import { TASK_TYPE_DEFAULTS, type ResolvedTaskType, type TaskHandler, type TaskTypeOptions } from './handler';
import { Messages } from './messages';
import { resolveRemoval, validateRemovalOptions, type RemovalOptions, type ResolvedRemoval } from './removal';
import { validateTaskTypeOptions } from './validation';

export interface RegisteredTaskType {
  resolved: ResolvedTaskType;
  /** null in a producer-only process that declared the type without running it. */
  handler: TaskHandler | null;
  /** Who registered it (class name), for error messages. */
  source: string;
}

/**
 * The task types this process knows: through a handler (@PriorityTask) or declared in the
 * options of a producer-only process. A submit of any other type is refused.
 */
export class TaskTypeRegistry {
  private readonly byType = new Map<string, RegisteredTaskType>();
  /**
   * Named queues: the queue this registry serves, and where to look up the queue that owns a type
   * unknown here, so that a submit through the wrong queue says which queue to use.
   */
  owner: { queue: string; queueOf(type: string): string | undefined } | null = null;

  private queueRemoval: RemovalOptions = {};
  private readonly removals = new Map<string, ResolvedRemoval>();

  /** The queue's removeOnComplete / removeOnFail (core/removal.ts), for types without their own. */
  setQueueRemoval(options: RemovalOptions): void {
    validateRemovalOptions(options, 'the queue');
    this.queueRemoval = { removeOnComplete: options.removeOnComplete, removeOnFail: options.removeOnFail };
    this.removals.clear();
  }

  /** The removal rules of a task type: its own options over the queue's (none for an unknown type). */
  removal(type: string): ResolvedRemoval {
    let r = this.removals.get(type);
    if (r === undefined) {
      r = resolveRemoval(this.byType.get(type)?.resolved.removal ?? {}, this.queueRemoval);
      this.removals.set(type, r);
    }
    return r;
  }

  register(type: string, options: TaskTypeOptions = {}, handler: TaskHandler | null = null, source = 'options'): void {
    const resolved = resolveTaskType(type, options);
    const existing = this.byType.get(type);
    if (existing) {
      if (existing.handler && handler) {
        throw new HandlerRegistrationError(Messages.duplicateHandler(type, existing.source, source));
      }
      // A handler replaces a bare declaration (the handler's options win); a declaration never
      // replaces a handler.
      if (!handler) return;
    }
    if (handler && typeof handler.run !== 'function' && (typeof handler.submit !== 'function' || typeof handler.poll !== 'function')) {
      throw new HandlerRegistrationError(Messages.handlerShape(type, source));
    }
    this.byType.set(type, { resolved, handler, source });
    this.removals.delete(type);
  }

  get(type: string): RegisteredTaskType | undefined {
    return this.byType.get(type);
  }

  resolve(type: string): ResolvedTaskType {
    const entry = this.byType.get(type);
    if (!entry) {
      const elsewhere = this.owner?.queueOf(type);
      if (elsewhere !== undefined && elsewhere !== this.owner!.queue) throw new WrongQueueError(type, this.owner!.queue, elsewhere);
      throw new UnknownTaskTypeError(type, this.types());
    }
    return entry.resolved;
  }

  types(): string[] {
    return [...this.byType.keys()];
  }
}

export function resolveTaskType(type: string, options: TaskTypeOptions): ResolvedTaskType {
  validateTaskTypeOptions(type, options);
  return {
    type,
    providerKey: options.providerKey ?? type,
    idempotent: options.idempotent ?? TASK_TYPE_DEFAULTS.idempotent,
    maxAttempts: options.maxAttempts ?? TASK_TYPE_DEFAULTS.maxAttempts,
    timeoutMs: options.timeoutMs ?? null,
    defaultPriority: options.defaultPriority ?? TASK_TYPE_DEFAULTS.defaultPriority,
    backoffBaseMs: options.backoff?.baseMs ?? TASK_TYPE_DEFAULTS.backoffBaseMs,
    backoffMaxMs: options.backoff?.maxMs ?? TASK_TYPE_DEFAULTS.backoffMaxMs,
    pollIntervalMs: options.pollIntervalMs ?? TASK_TYPE_DEFAULTS.pollIntervalMs,
    maxPollIntervalMs: options.maxPollIntervalMs ?? TASK_TYPE_DEFAULTS.maxPollIntervalMs,
    boost: options.boost ? { beforeDeadlineMs: options.boost.beforeDeadlineMs, priority: options.boost.priority } : null,
    removal: { removeOnComplete: options.removeOnComplete, removeOnFail: options.removeOnFail },
  };
}
