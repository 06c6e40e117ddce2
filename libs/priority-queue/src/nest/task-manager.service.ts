import { Inject, Injectable, Optional } from '@nestjs/common';
import type { TaskEventListener } from '../core/events';
import type { TransportSubscriber } from '../core/event-transport.port';
import type { TaskExplanation } from '../core/explain';
import type { TaskHistoryEntry } from '../core/history';
import type { TaskPage, TaskQuery } from '../core/task-query';
import { PriorityQueue } from '../core/queue';
import { waitForTask, type WaitForOptions } from '../core/wait-for';
import type { QueueStats } from '../core/task-store.port';
import type { Task, TaskStatus } from '../core/task';
import type { SubmitInput } from '../core/validation';
import { DEFAULT_QUEUE_NAME, PRIORITY_QUEUE_CORE } from './priority-queue.constants';

/** What a TaskManager knows of its queue besides the core (set by the module). */
export interface TaskManagerContext {
  queue: string;
  /** The queue's cross-process events (waitFor listens to them). */
  subscribe?(subscriber: TransportSubscriber): Promise<() => void>;
}

export const TASK_MANAGER_CONTEXT = Symbol('TASK_MANAGER_CONTEXT');

/** What `TaskManager.list` reads: one status, a page size and the seq to continue after. */
export interface TaskListQuery {
  status: TaskStatus;
  limit?: number;
  afterSeq?: number;
}

/**
 * Submit and inspect tasks. Priority and tenant are server-side decisions: map them from the
 * authenticated plan and the task type, never from a client field.
 */
@Injectable()
export class TaskManager {
  /** The queue this manager submits to (`default` for forRoot's queue). */
  readonly queueName: string;
  private readonly context: TaskManagerContext;

  constructor(
    @Inject(PRIORITY_QUEUE_CORE) private readonly queue: PriorityQueue,
    @Optional() @Inject(TASK_MANAGER_CONTEXT) context?: TaskManagerContext,
  ) {
    this.context = context ?? { queue: DEFAULT_QUEUE_NAME };
    this.queueName = this.context.queue;
  }

  submit<P = unknown>(input: SubmitInput<P>): Promise<Task<P>> {
    return this.queue.submit(input);
  }

  submitMany(inputs: readonly SubmitInput[]): Promise<Task[]> {
    return this.queue.submitMany(inputs);
  }

  get(id: string): Promise<Task | null> {
    return this.queue.get(id);
  }

  cancel(id: string): Promise<Task> {
    return this.queue.cancel(id);
  }

  changePriority(id: string, priority: number): Promise<Task> {
    return this.queue.changePriority(id, priority);
  }

  /** Puts a FAILED, TIMED_OUT, CANCELED or SUBMIT_UNKNOWN task back to PENDING_SUBMIT (attempts reset). */
  retry(id: string): Promise<Task> {
    return this.queue.retry(id);
  }

  /** Why a pending task is not running now. */
  explain(id: string): Promise<TaskExplanation> {
    return this.queue.explain(id);
  }

  /** The task's last status transitions, oldest first. */
  history(id: string): Promise<TaskHistoryEntry[]> {
    return this.queue.history(id);
  }

  /** Tasks of one status with filters, in the order the queue will run them (pending) or newest first. */
  query(query: TaskQuery): Promise<TaskPage> {
    return this.queue.query(query);
  }

  stats(): Promise<QueueStats> {
    return this.queue.stats();
  }

  /**
   * Tasks of one status in creation order (seq), `limit` (default 100, at most 10,000) at a time;
   * pass the last task's seq as `afterSeq` for the next page. `list('FAILED')` or
   * `list({ status: 'FAILED', limit: 50 })`.
   */
  list(status: TaskStatus, limit?: number, afterSeq?: number): Promise<Task[]>;
  list(query: TaskListQuery): Promise<Task[]>;
  list(query: TaskStatus | TaskListQuery, limit?: number, afterSeq?: number): Promise<Task[]> {
    if (typeof query === 'object' && query !== null) return this.queue.list(query.status, query.limit, query.afterSeq);
    return this.queue.list(query, limit, afterSeq);
  }

  /**
   * Resolves with the task once it reaches a terminal status (SUCCEEDED, FAILED, CANCELED,
   * TIMED_OUT, SUBMIT_UNKNOWN), whichever process runs it. It listens to the queue's events and
   * also re-reads the task every `pollMs` (default 1 s), so a missed event (delivery is at most
   * once) only delays the answer. Rejects with WaitTimeoutError after `timeoutMs` (the task is
   * not cancelled), TaskNotFoundError for an unknown id.
   */
  waitFor<P = unknown, R = unknown>(id: string, options?: WaitForOptions): Promise<Task<P, R>> {
    const subscribe = this.context.subscribe;
    return waitForTask({ get: (x) => this.queue.get(x), events: this.queue.events, subscribe: subscribe && ((s) => subscribe.call(this.context, s)) }, id, options) as Promise<Task<P, R>>;
  }

  /** Listens to every status transition made by this process; returns the unsubscribe. */
  onEvent(listener: TaskEventListener): () => void {
    return this.queue.events.on(listener);
  }
}
