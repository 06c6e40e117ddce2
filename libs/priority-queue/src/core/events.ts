import type { Task, TaskStatus, Transition } from './task';

/**
 * One status transition, emitted by the process that made it. `from` is null on creation. A
 * deadline boost (core/boost.ts) is an event too, named `boosted`: from and to are both
 * PENDING_SUBMIT and `boostedFrom` is the priority before it (the task has the new one).
 */
export interface TaskEvent {
  taskId: string;
  type: string;
  from: TaskStatus | null;
  to: TaskStatus;
  task: Task;
  at: number;
  boostedFrom?: number;
}

export type TaskEventListener = (event: TaskEvent) => void;

/** A minimal typed event bus; a listener that throws never breaks the queue. */
export class TaskEvents {
  private listeners: TaskEventListener[] = [];

  on(listener: TaskEventListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  get active(): boolean {
    return this.listeners.length > 0;
  }

  emit(task: Task, from: TaskStatus | null, to: TaskStatus = task.status): void {
    if (this.listeners.length === 0) return;
    const event: TaskEvent = { taskId: task.id, type: task.type, from, to, task, at: task.updatedAt };
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        /* listeners must not break the worker */
      }
    }
  }

  /** A deadline boost raised the task's priority from `fromPriority` (a `boosted` event). */
  emitBoost(task: Task, fromPriority: number): void {
    if (this.listeners.length === 0) return;
    const event: TaskEvent = { taskId: task.id, type: task.type, from: task.status, to: task.status, task, at: task.updatedAt, boostedFrom: fromPriority };
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        /* listeners must not break the worker */
      }
    }
  }

  emitTransitions(transitions: readonly Transition[]): void {
    for (const t of transitions) this.emit(t.task, t.from, t.to);
  }
}
