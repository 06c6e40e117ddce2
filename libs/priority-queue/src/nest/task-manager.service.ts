import { Inject, Injectable } from '@nestjs/common';
import type { TaskEventListener } from '../core/events';
import { PriorityQueue } from '../core/queue';
import type { QueueStats } from '../core/task-store.port';
import type { Task, TaskStatus } from '../core/task';
import type { SubmitInput } from '../core/validation';
import { PRIORITY_QUEUE_CORE } from './priority-queue.constants';

/**
 * Submit and inspect tasks. Priority and tenant are server-side decisions: map them from the
 * authenticated plan and the task type, never from a client field.
 */
@Injectable()
export class TaskManager {
  constructor(@Inject(PRIORITY_QUEUE_CORE) private readonly queue: PriorityQueue) {}

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

  stats(): Promise<QueueStats> {
    return this.queue.stats();
  }

  list(status: TaskStatus, limit?: number, afterSeq?: number): Promise<Task[]> {
    return this.queue.list(status, limit, afterSeq);
  }

  /** Listens to every status transition made by this process; returns the unsubscribe. */
  onEvent(listener: TaskEventListener): () => void {
    return this.queue.events.on(listener);
  }
}
