import { resolveBoost, type BoostOptions } from './boost';
import { NotSupportedByStoreError, TaskNotFoundError, ValidationError } from './errors';
import { FEATURE_BOOST } from './policies';
import { TaskEvents } from './events';
import { Messages } from './messages';
import type { ResolvedTaskType } from './handler';
import type { TaskTypeRegistry } from './registry';
import type { TaskExplanation } from './explain';
import type { TaskHistoryEntry } from './history';
import type { TaskPage, TaskQuery } from './task-query';
import type { QueueStats, TaskStore } from './task-store.port';
import { TaskStatus, type NewTask, type Task } from './task';
import { payloadFingerprint } from './idempotency';
import { TaskIdSequence } from './task-ids';
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  intOption,
  isIntIn,
  submitFieldsValid,
  validatePayload,
  validatePriority,
  validateSubmitInput,
  validateTaskId,
  validateTaskQuery,
  type SubmitInput,
} from './validation';

export interface PriorityQueueOptions {
  store: TaskStore;
  registry: TaskTypeRegistry;
  /** Largest payload accepted, in bytes of its JSON (default 256 KiB). */
  maxPayloadBytes?: number;
  events?: TaskEvents;
}

/** Largest submitMany batch, so one call cannot build an unbounded transaction. */
export const MAX_BATCH = 10_000;

/** Ids of the tasks of every store that does not make its own (TaskStore.newTaskId). */
const taskIds = new TaskIdSequence();

/**
 * The producer side, free of any framework: validates input, resolves the task type, writes
 * through the store. Nest's TaskManager is a thin shell around it.
 */
export class PriorityQueue {
  readonly store: TaskStore;
  readonly events: TaskEvents;
  private readonly registry: TaskTypeRegistry;
  private readonly maxPayloadBytes: number;
  private readonly newId: () => string;

  constructor(options: PriorityQueueOptions) {
    const store = options.store;
    this.store = store;
    this.newId = store.newTaskId !== undefined ? () => store.newTaskId!() : () => taskIds.next();
    this.registry = options.registry;
    this.events = options.events ?? new TaskEvents();
    this.maxPayloadBytes = intOption('maxPayloadBytes', options.maxPayloadBytes, DEFAULT_MAX_PAYLOAD_BYTES, 1);
  }

  async submit<P = unknown>(input: SubmitInput<P>): Promise<Task<P>> {
    const task = this.toNewTask(input);
    const result = this.store.createOne !== undefined ? await this.store.createOne(task) : (await this.store.create([task]))[0];
    if (result.created) this.events.emit(result.task, null);
    return result.task as Task<P>;
  }

  /** Validates every input first; then writes all of them in one atomic store call. */
  async submitMany(inputs: readonly SubmitInput[]): Promise<Task[]> {
    if (!Array.isArray(inputs)) throw new ValidationError(Messages.invalidSubmit('submitMany takes an array of tasks'));
    if (inputs.length > MAX_BATCH) {
      throw new ValidationError(Messages.invalidSubmit(`submitMany takes at most ${MAX_BATCH} tasks per call, got ${inputs.length}`));
    }
    if (inputs.length === 0) return [];
    // validate all first (the fields of every input in plain code, then each payload), then
    // build: so no NewTask is alive during validation's young-generation collections
    const types = new Array<ResolvedTaskType>(inputs.length);
    const fieldsOk = submitFieldsValid(inputs);
    for (let i = 0; i < inputs.length; i++) {
      try {
        if (fieldsOk) {
          validatePayload(inputs[i].payload, this.maxPayloadBytes);
          types[i] = this.registry.resolve(inputs[i].type);
        } else types[i] = this.check(inputs[i]); // finds the first bad input and says what is wrong
      } catch (e) {
        // the same error (its class and code kept), its message saying which task
        if (e instanceof ValidationError) e.message = `Task #${i} of submitMany: ${e.message}`;
        throw e;
      }
    }
    if (!fieldsOk) throw new Error('submitMany: the batch check and the per-task check disagree'); // cannot happen
    const news = new Array<NewTask>(inputs.length);
    for (let i = 0; i < inputs.length; i++) {
      try {
        news[i] = this.build(inputs[i], types[i]);
      } catch (e) {
        if (e instanceof ValidationError) e.message = `Task #${i} of submitMany: ${e.message}`;
        throw e;
      }
    }
    const results = await this.store.create(news);
    if (this.events.active) for (const r of results) if (r.created) this.events.emit(r.task, null);
    const tasks = new Array<Task>(results.length);
    for (let i = 0; i < results.length; i++) tasks[i] = results[i].task;
    return tasks;
  }

  async get(id: string): Promise<Task | null> {
    validateTaskId(id);
    return this.store.get(id);
  }

  async cancel(id: string): Promise<Task> {
    validateTaskId(id);
    const before = await this.store.get(id);
    if (!before) throw new TaskNotFoundError(id);
    const after = await this.store.cancel(id);
    if (!after) throw new TaskNotFoundError(id);
    if (after.status !== before.status) this.events.emit(after, before.status);
    return after;
  }

  async changePriority(id: string, priority: number): Promise<Task> {
    validateTaskId(id);
    validatePriority(priority);
    return this.store.changePriority(id, priority);
  }

  /**
   * Puts a FAILED, TIMED_OUT, CANCELED or SUBMIT_UNKNOWN task back to PENDING_SUBMIT as a fresh
   * attempt (core/requeue.ts); emits the transition. InvalidStateError in any other status,
   * TaskNotFoundError when it does not exist.
   */
  async retry(id: string): Promise<Task> {
    validateTaskId(id);
    const t = await this.store.requeue(id);
    this.events.emit(t.task, t.from, t.to);
    return t.task;
  }

  /** Why a task is not running now (core/explain.ts); TaskNotFoundError when it does not exist. */
  async explain(id: string): Promise<TaskExplanation> {
    validateTaskId(id);
    return this.store.explain(id);
  }

  /** The task's last status transitions, oldest first (core/history.ts). */
  async history(id: string): Promise<TaskHistoryEntry[]> {
    validateTaskId(id);
    return this.store.history(id);
  }

  /** One page of tasks of a status with filters (core/task-query.ts); ValidationError for a bad query. */
  async query(query: TaskQuery): Promise<TaskPage> {
    validateTaskQuery(query);
    return this.store.query(query);
  }

  stats(): Promise<QueueStats> {
    return this.store.stats();
  }

  list(status: TaskStatus, limit = 100, afterSeq?: number): Promise<Task[]> {
    if (!Object.values(TaskStatus).includes(status)) {
      return Promise.reject(new ValidationError(Messages.invalidOption('status', status, Object.values(TaskStatus).join(', '))));
    }
    if (!isIntIn(limit, 1, 10_000)) {
      return Promise.reject(new ValidationError(Messages.invalidOption('limit', limit, 'an integer from 1 to 10000')));
    }
    return this.store.list({ status, limit, afterSeq });
  }

  private toNewTask(input: SubmitInput): NewTask {
    return this.build(input, this.check(input));
  }

  /** Validates one input (once) and resolves its type; throws ValidationError / UnknownTaskTypeError. */
  private check(input: SubmitInput): ResolvedTaskType {
    validateSubmitInput(input, this.maxPayloadBytes);
    return this.registry.resolve(input.type);
  }

  /** The NewTask of a checked input; throws when its boost cannot be kept (no deadline, or a store without boosts). */
  private build(input: SubmitInput, t: ResolvedTaskType): NewTask {
    const payload = input.payload === undefined ? null : input.payload;
    const timeoutMs = input.timeoutMs === undefined ? t.timeoutMs : input.timeoutMs;
    const wanted = input.boost === undefined ? t.boost : input.boost;
    let priority = input.priority ?? t.defaultPriority;
    let boost: BoostOptions | null = null;
    if (wanted != null) {
      if (timeoutMs === null) throw new ValidationError(Messages.boostNeedsDeadline(input.type), ['boost: needs timeoutMs']);
      if (this.store.policies?.boost !== true) throw new NotSupportedByStoreError(FEATURE_BOOST, this.store.constructor?.name ?? 'this store');
      ({ priority, boost } = resolveBoost(priority, timeoutMs, wanted));
    }
    return {
      id: this.newId(),
      idempotencyKey: input.idempotencyKey ?? null,
      type: input.type,
      payload,
      priority,
      providerKey: input.providerKey ?? t.providerKey,
      accountId: input.accountId ?? null,
      tenantId: input.tenantId ?? null,
      concurrencyKey: input.concurrencyKey ?? null,
      delayMs: input.delayMs ?? 0,
      timeoutMs,
      boost,
      maxAttempts: input.maxAttempts ?? t.maxAttempts,
      idempotent: t.idempotent,
      payloadFingerprint: input.idempotencyKey == null ? undefined : payloadFingerprint(payload),
    };
  }
}
