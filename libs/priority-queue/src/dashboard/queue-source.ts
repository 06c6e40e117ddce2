import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { LimitUpdate, LimitsSnapshot } from '../core/admission';
import { PriorityQueueError, QueueNotFoundError, ValidationError } from '../core/errors';
import type { TaskEventListener } from '../core/events';
import type { TaskTypeRegistry } from '../core/registry';
import { Messages } from '../core/messages';
import type { QueueStats } from '../core/task-store.port';
import type { Task, TaskStatus } from '../core/task';
import { AdmissionGuard } from '../nest/admission-guard.service';
import { PriorityQueueRegistry } from '../nest/priority-queue.registry';
import { TaskManager } from '../nest/task-manager.service';

/**
 * The ONE place where the dashboard meets the queue API. Everything else in the dashboard talks
 * to `DashboardQueue`, so a change of that API changes only this file: every queue of the app
 * (PriorityQueueRegistry) with its TaskManager, AdmissionGuard and task types. Still to come:
 * TaskManager.query / explain / history / retry (the tasks page lists by seq until then).
 */

/** What the tasks page asks for; filters beyond status and search need TaskManager.query(). */
export interface TaskPageQuery {
  status: TaskStatus;
  type?: string;
  tenantId?: string;
  providerKey?: string;
  accountId?: string;
  minPriority?: number;
  maxPriority?: number;
  /** A task id (or, with query(), an idempotency key). */
  search?: string;
  limit: number;
  cursor?: string;
}

export interface TaskPage {
  tasks: Task[];
  nextCursor: string | null;
  /** 'claim': pending tasks in the order the queue will claim them; 'seq': oldest first. */
  order: 'claim' | 'seq';
}

/** Which optional parts of the queue API this version offers (the page hides the others). */
export interface QueueCapabilities {
  /** Filters (type, tenant, provider, account, priority range) and claim order for pending tasks. */
  query: boolean;
  explain: boolean;
  history: boolean;
  retry: boolean;
}

export interface DashboardQueue {
  readonly name: string;
  readonly capabilities: QueueCapabilities;
  /** The task types this process knows (handlers or declared) and their default provider. */
  taskTypes(): Array<{ type: string; providerKey: string }>;
  stats(): Promise<QueueStats>;
  get(id: string): Promise<Task | null>;
  cancel(id: string): Promise<Task>;
  changePriority(id: string, priority: number): Promise<Task>;
  tasks(query: TaskPageQuery): Promise<TaskPage>;
  getLimits(): Promise<LimitsSnapshot>;
  setLimits(update: LimitUpdate): Promise<LimitsSnapshot>;
  /** Transitions made by THIS process (the event bus is per process). */
  onEvent(listener: TaskEventListener): () => void;
}

const NO_CAPABILITIES: QueueCapabilities = { query: false, explain: false, history: false, retry: false };

class RegisteredQueue implements DashboardQueue {
  readonly capabilities = NO_CAPABILITIES;

  constructor(
    readonly name: string,
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

  async tasks(q: TaskPageQuery): Promise<TaskPage> {
    const filters = (['type', 'tenantId', 'providerKey', 'accountId', 'minPriority', 'maxPriority'] as const).filter((k) => q[k] !== undefined);
    if (filters.length) throw new ValidationError(Messages.dashboardUnsupported(`Filtering by ${filters.join(', ')}`, 'TaskManager.query()'));
    if (q.search !== undefined) {
      const t = await this.manager.get(q.search);
      return { tasks: t ? [t] : [], nextCursor: null, order: 'seq' };
    }
    const afterSeq = q.cursor === undefined ? undefined : Number(q.cursor);
    if (afterSeq !== undefined && !Number.isSafeInteger(afterSeq)) {
      throw new ValidationError(Messages.dashboardBadParam('cursor', q.cursor, 'a cursor returned by the previous page'));
    }
    const tasks = await this.manager.list(q.status, q.limit + 1, afterSeq);
    const more = tasks.length > q.limit;
    if (more) tasks.length = q.limit;
    return { tasks, nextCursor: more ? String(tasks[tasks.length - 1].seq) : null, order: 'seq' };
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
      q = new RegisteredQueue(name, handle.taskManager, handle.admissionGuard, handle.registry);
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
