import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { TaskEvents } from '../core/events';
import { Messages } from '../core/messages';
import { TaskTypeRegistry } from '../core/registry';
import type { TaskStore } from '../core/task-store.port';
import { Worker } from '../core/worker';
import { PRIORITY_QUEUE_EVENTS, PRIORITY_QUEUE_REGISTRY, PRIORITY_QUEUE_STORE } from './priority-queue.constants';
import { PRIORITY_QUEUE_OPTIONS } from './priority-queue.module-definition';
import type { PriorityQueueModuleOptions } from './priority-queue.options';
import { SchedulerTimerHost } from './scheduler-timer-host';
import { OWNED_STORES } from './store.provider';

const DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;
const PURGE_BATCH = 1000;

/**
 * Starts the worker when the application has bootstrapped (after the explorer registered the
 * handlers), keeps its timers in SchedulerRegistry, purges old terminal tasks, and stops
 * everything on shutdown (model: nestjs/schedule's orchestrator).
 */
@Injectable()
export class PriorityQueueOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('PriorityQueue');
  private worker: Worker | null = null;
  private timers: SchedulerTimerHost | null = null;
  private readonly purgeName = `priority-queue:purge:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    @Inject(PRIORITY_QUEUE_OPTIONS) private readonly options: PriorityQueueModuleOptions,
    @Inject(PRIORITY_QUEUE_STORE) private readonly store: TaskStore,
    @Inject(PRIORITY_QUEUE_REGISTRY) private readonly registry: TaskTypeRegistry,
    @Inject(PRIORITY_QUEUE_EVENTS) private readonly events: TaskEvents,
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {}

  /** The worker of this process, or null when workers are disabled. */
  get currentWorker(): Worker | null {
    return this.worker;
  }

  async onApplicationBootstrap(): Promise<void> {
    const w = this.options.workers ?? {};
    if (w.enabled === false) return;
    if (!this.scheduler) throw new Error(Messages.scheduleModuleMissing());
    this.timers = new SchedulerTimerHost(this.scheduler);
    this.worker = new Worker({
      store: this.store,
      registry: this.registry,
      events: this.events,
      concurrency: w.concurrency,
      prefetch: w.prefetch,
      batchSize: w.batchSize,
      claimsInFlight: w.claimsInFlight,
      leaseMs: w.leaseMs,
      idlePollMs: w.idlePollMs,
      recoverEveryMs: w.recoverEveryMs,
      shutdownGraceMs: w.shutdownGraceMs,
      timers: this.timers,
      onError: (e) => this.logger.warn(`worker: ${e instanceof Error ? e.message : String(e)}`),
    });
    await this.worker.start();
    const retention = this.options.retentionMs ?? DEFAULT_RETENTION_MS;
    if (retention > 0) {
      this.timers.addInterval(this.purgeName, () => void this.purge(retention), this.options.purgeEveryMs ?? 60_000);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.timers?.remove(this.purgeName);
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    if (OWNED_STORES.has(this.store)) {
      OWNED_STORES.delete(this.store);
      await this.store.close();
    }
  }

  private async purge(retentionMs: number): Promise<void> {
    try {
      const now = await this.store.now();
      await this.store.purge(now - retentionMs, PURGE_BATCH);
    } catch (e) {
      this.logger.warn(`purge: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
