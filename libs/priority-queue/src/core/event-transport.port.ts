import type { TaskStatus } from './task';

/**
 * One transition as it travels between processes: ids and statuses, not the task (payloads and
 * results can be large; read the task with get() when you need it).
 */
export interface TransitionMessage {
  taskId: string;
  type: string;
  from: TaskStatus | null;
  to: TaskStatus;
  /** Store time of the transition (the task's updatedAt). */
  at: number;
  /** The task's error after the transition, if any (a failure reason), cut to 1000 characters. */
  error?: string | null;
  /** Set on a `boosted` event (core/events.ts): the priority before the deadline boost. */
  boostedFrom?: number;
}

export interface TransportSubscriber {
  /** Messages published by any process on the queue (this one included), in publish order per publisher. */
  onMessages(messages: readonly TransitionMessage[]): void;
  /**
   * The transport lost its link and got it back (a reconnect): messages published meanwhile are
   * lost. Subscribers that track a state re-read it (waitFor does).
   */
  onGap?(): void;
}

/**
 * Carries task transitions of ONE queue between processes, like BullMQ's QueueEvents. Delivery is
 * at most once: a message published while a subscriber is disconnected, or by a process that
 * dies between its write and its publish, is never seen. Stores provide one through
 * TaskStore.createEventTransport(): Redis pub/sub and PostgreSQL LISTEN/NOTIFY reach every
 * process; the memory, SQLite and MySQL/MariaDB stores reach only subscribers in this process.
 */
export interface TaskEventTransport {
  /** `cluster`: every process on the same store sees the messages; `process`: only this process. */
  readonly reach: 'cluster' | 'process';
  publish(messages: readonly TransitionMessage[]): Promise<void>;
  subscribe(subscriber: TransportSubscriber): Promise<() => Promise<void>>;
}
