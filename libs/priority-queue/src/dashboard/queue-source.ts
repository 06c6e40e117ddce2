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
import { PRIORITY_QUEUE_REGISTRY } from '../nest/priority-queue.constants';
import { TaskManager } from '../nest/task-manager.service';

/**
 * The ONE place where the dashboard meets the queue API. Everything else in the dashboard talks
 * to `DashboardQueue`, so moving to named queues or to new TaskManager methods changes only
 * this file. Today: the default queue of PriorityQueueModule, its TaskManager and AdmissionGuard.
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

export const DEFAULT_QUEUE_NAME = 'default';

const NO_CAPABILITIES: QueueCapabilities = { query: false, explain: false, history: false, retry: false };

class DefaultQueue implements DashboardQueue {
  readonly capabilities = NO_CAPABILITIES;

  constructor(
    readonly name: string,
    private readonly manager: TaskManager,
    private readonly guard: AdmissionGuard,
    private readonly registry: TaskTypeRegistry | null,
  ) {}

  taskTypes(): Array<{ type: string; providerKey: string }> {
    const r = this.registry;
    return r ? r.types().map((type) => ({ type, providerKey: r.resolve(type).providerKey })) : [];
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
  private resolved: Map<string, DashboardQueue> | null = null;

  constructor(private readonly moduleRef: ModuleRef) {}

  /** Fails the start-up at once when the app has no PriorityQueueModule. */
  onModuleInit(): void {
    this.queues();
  }

  names(): string[] {
    return [...this.queues().keys()];
  }

  all(): DashboardQueue[] {
    return [...this.queues().values()];
  }

  /** The queue of that name; QueueNotFoundError (a 400) otherwise. */
  queue(name: string): DashboardQueue {
    const q = this.queues().get(name);
    if (!q) throw new QueueNotFoundError(name, this.names());
    return q;
  }

  private queues(): Map<string, DashboardQueue> {
    if (this.resolved) return this.resolved;
    let manager: TaskManager;
    let guard: AdmissionGuard;
    try {
      manager = this.moduleRef.get(TaskManager, { strict: false });
      guard = this.moduleRef.get(AdmissionGuard, { strict: false });
    } catch {
      throw new PriorityQueueError(Messages.dashboardNeedsQueueModule());
    }
    let registry: TaskTypeRegistry | null = null;
    try {
      registry = this.moduleRef.get<TaskTypeRegistry>(PRIORITY_QUEUE_REGISTRY, { strict: false });
    } catch {
      registry = null; // the page then offers no list of types
    }
    this.resolved = new Map([[DEFAULT_QUEUE_NAME, new DefaultQueue(DEFAULT_QUEUE_NAME, manager, guard, registry)]]);
    return this.resolved;
  }
}
