import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { LimitUpdate, LimitsSnapshot } from '../core/admission';
import { PriorityQueueError } from '../core/errors';
import type { TaskEventListener } from '../core/events';
import type { TaskExplanation } from '../core/explain';
import type { TaskHistoryEntry } from '../core/history';
import type { TaskQuery } from '../core/task-query';
import type { TaskTypeRegistry } from '../core/registry';
import { Messages } from '../core/messages';
import type { QueueStats } from '../core/task-store.port';
import { TaskStatus, type Task } from '../core/task';
import { AdmissionGuard } from '../nest/admission-guard.service';
import { PriorityQueueRegistry } from '../nest/priority-queue.registry';
import { TaskManager } from '../nest/task-manager.service';

/**
 * The ONE place where the dashboard meets the queue API. Everything else in the dashboard talks
 * to `DashboardQueue`, so a change of that API changes only this file: every queue of the app
 * (PriorityQueueRegistry) with its TaskManager (query, explain, history, retry), AdmissionGuard,
 * task types and its store's historyLimit.
 */

export interface TaskPage {
  tasks: Task[];
  nextCursor: string | null;
  /** 'claim': pending tasks in the order the queue will claim them; 'newest': newest first. */
  order: 'claim' | 'newest';
}

export interface DashboardQueue {
  readonly name: string;
  /** Transitions its store keeps per task (the store option historyLimit); 0 = history off. */
  readonly historyLimit: number;
  /** The task types this process knows (handlers or declared) and their default provider. */
  taskTypes(): Array<{ type: string; providerKey: string }>;
  stats(): Promise<QueueStats>;
  get(id: string): Promise<Task | null>;
  cancel(id: string): Promise<Task>;
  changePriority(id: string, priority: number): Promise<Task>;
  retry(id: string): Promise<Task>;
  explain(id: string): Promise<TaskExplanation>;
  /** [] when the store keeps no history (historyLimit 0: ask historyLimit, not the length). */
  history(id: string): Promise<TaskHistoryEntry[]>;
  tasks(query: TaskQuery): Promise<TaskPage>;
  getLimits(): Promise<LimitsSnapshot>;
  setLimits(update: LimitUpdate): Promise<LimitsSnapshot>;
  /** Transitions made by THIS process (the event bus is per process). */
  onEvent(listener: TaskEventListener): () => void;
}

class RegisteredQueue implements DashboardQueue {
  constructor(
    readonly name: string,
    readonly historyLimit: number,
    private readonly manager: TaskManager,
    private readonly guard: AdmissionGuard,
    private readonly registry: TaskTypeRegistry,
  ) {}

  taskTypes(): Array<{ type: string; providerKey: string }> {
    return this.registry.types().map((type) => ({ type, providerKey: this.registry.resolve(type).providerKey }));
  }

  stats(): Promise<QueueStats> {
    return this.manager.stats();
  }

  get(id: string): Promise<Task | null> {
    return this.manager.get(id);
  }

  cancel(id: string): Promise<Task> {
    return this.manager.cancel(id);
  }

  changePriority(id: string, priority: number): Promise<Task> {
    return this.manager.changePriority(id, priority);
  }

  retry(id: string): Promise<Task> {
    return this.manager.retry(id);
  }

  explain(id: string): Promise<TaskExplanation> {
    return this.manager.explain(id);
  }

  history(id: string): Promise<TaskHistoryEntry[]> {
    return this.manager.history(id);
  }

  async tasks(q: TaskQuery): Promise<TaskPage> {
    const page = await this.manager.query(q);
    return { ...page, order: q.status === TaskStatus.PENDING_SUBMIT ? 'claim' : 'newest' };
  }

  getLimits(): Promise<LimitsSnapshot> {
    return this.guard.getLimits();
  }

  setLimits(update: LimitUpdate): Promise<LimitsSnapshot> {
    return this.guard.setLimits(update);
  }

  onEvent(listener: TaskEventListener): () => void {
    return this.manager.onEvent(listener);
  }
}

@Injectable()
export class QueueSource implements OnModuleInit {
  private registry: PriorityQueueRegistry | null = null;
  private readonly queues = new Map<string, DashboardQueue>();

  constructor(private readonly moduleRef: ModuleRef) {}

  /** Fails the start-up at once when the app has no PriorityQueueModule. */
  onModuleInit(): void {
    this.all();
  }

  /** The queues of the application (PriorityQueueRegistry), `default` first. */
  names(): string[] {
    return this.queueRegistry().names();
  }

  all(): DashboardQueue[] {
    return this.names().map((n) => this.queue(n));
  }

  /** The queue of that name; QueueNotFoundError (a 400 of this API) otherwise. */
  queue(name: string): DashboardQueue {
    let q = this.queues.get(name);
    if (!q) {
      const handle = this.queueRegistry().handle(name); // QueueNotFoundError for an unknown name
      q = new RegisteredQueue(name, handle.store.historyLimit, handle.taskManager, handle.admissionGuard, handle.registry);
      this.queues.set(name, q);
    }
    return q;
  }

  private queueRegistry(): PriorityQueueRegistry {
    if (this.registry) return this.registry;
    let registry: PriorityQueueRegistry;
    try {
      registry = this.moduleRef.get(PriorityQueueRegistry, { strict: false });
    } catch {
      throw new PriorityQueueError(Messages.dashboardNeedsQueueModule());
    }
    this.registry = registry;
    return registry;
  }
}
