import { Injectable, Optional, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { ConfigurationError } from '../core/errors';
import { Messages } from '../core/messages';
import { MAX_TIMER_MS, settledWithin, SHUTDOWN_WAIT_MS } from '../core/timers';
import { intOption, MAX_DURATION_MS } from '../core/validation';
import { Worker } from '../core/worker';
import { DEFAULT_QUEUE_NAME } from './priority-queue.constants';
import { PriorityQueueRegistry } from './priority-queue.registry';
import type { QueueHandle } from './queue-handle';
import { SchedulerTimerHost } from './scheduler-timer-host';

const DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;
const PURGE_BATCH = 1000;

/**
 * Starts each queue's worker when the application has bootstrapped (after the explorer registered
 * the handlers) — only for a queue with a handler in this process —, keeps the timers in
 * SchedulerRegistry, purges old terminal tasks, and on shutdown stops the workers, publishes the
 * last events, gives the stores back and closes what the library opened (model: nestjs/schedule's
 * orchestrator).
 */
@Injectable()
export class PriorityQueueOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private timers: SchedulerTimerHost | null = null;
  private readonly purges = new Map<string, string>();
  private readonly tag = `${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  private started = false;
  private closed = false;

  constructor(
    private readonly queues: PriorityQueueRegistry,
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {}

  /** The default queue's worker in this process, or null (workers disabled, or no handler). */
  get currentWorker(): Worker | null {
    return this.queues.has(DEFAULT_QUEUE_NAME) ? this.queues.handle(DEFAULT_QUEUE_NAME).worker : null;
  }

  /** The worker of a queue in this process, or null. */
  worker(queue: string): Worker | null {
    return this.queues.handle(queue).worker;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const handles = this.queues.handles().filter((h) => h.options.workers?.enabled !== false);
    if (handles.length === 0) return;
    if (!this.scheduler) throw new ConfigurationError(Messages.scheduleModuleMissing());
    this.timers ??= new SchedulerTimerHost(this.scheduler);
    await Promise.all(handles.map((h) => this.start(h)));
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const name of this.purges.values()) this.timers?.remove(name);
    this.purges.clear();
    await Promise.all(
      this.queues.handles().map(async (h) => {
        const w = h.worker;
        h.worker = null;
        if (w) {
          await w.stop();
          this.queues.log.log(`[${h.name}] worker stopped`);
        }
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const log = this.queues.log;
    // each step waits for the store at most SHUTDOWN_WAIT_MS: one that does not answer must not hold the shutdown
    const step = async (what: string, work: Promise<unknown>) => {
      if (!(await settledWithin(work, SHUTDOWN_WAIT_MS))) log.warn(Messages.shutdownStepLate(what, SHUTDOWN_WAIT_MS));
    };
    await Promise.all(this.queues.handles().map((h) => step(`[${h.name}] events`, h.hub.stop().catch((e) => log.warn(`[${h.name}] events: ${message(e)}`)))));
    await Promise.all(this.queues.handles().map((h) => step(`[${h.name}] closing its store`, h.release().catch((e) => log.warn(`[${h.name}] closing its store: ${message(e)}`)))));
    const backend = this.queues.root.backend?.backend;
    if (backend) await step('closing the store connection', backend.close().catch((e) => log.warn(`closing the store connection: ${message(e)}`)));
  }

  private async start(h: QueueHandle): Promise<void> {
    const w = h.options.workers ?? {};
    const retention = intOption('retentionMs', h.options.retentionMs, DEFAULT_RETENTION_MS, 0, MAX_DURATION_MS);
    const purgeEveryMs = intOption('purgeEveryMs', h.options.purgeEveryMs, 60_000, 1, MAX_TIMER_MS);
    if (retention > 0) {
      const name = `priority-queue:purge:${h.name}:${this.tag}`;
      this.purges.set(h.name, name);
      this.timers!.addInterval(name, () => void this.purge(h, retention), purgeEveryMs);
    }
    if (h.handlers === 0) return; // nothing to run here: a worker would only claim and hand back
    const log = this.queues.log;
    const worker = new Worker({
      store: h.store,
      registry: h.registry,
      events: h.events,
      concurrency: w.concurrency,
      prefetch: w.prefetch,
      batchSize: w.batchSize,
      claimsInFlight: w.claimsInFlight,
      leaseMs: w.leaseMs,
      idlePollMs: w.idlePollMs,
      recoverEveryMs: w.recoverEveryMs,
      shutdownGraceMs: w.shutdownGraceMs,
      timers: this.timers!,
      onError: (e) => log.warn(`[${h.name}] worker: ${message(e)}`),
      observer: log.observer(h.name),
    });
    h.worker = worker;
    await worker.start();
    log.log(`[${h.name}] worker ${worker.owner} started: ${h.registry.types().filter((t) => h.registry.get(t)?.handler).join(', ')}`);
  }

  private async purge(h: QueueHandle, retentionMs: number): Promise<void> {
    try {
      const now = await h.store.now();
      await h.store.purge(now - retentionMs, PURGE_BATCH);
    } catch (e) {
      this.queues.log.warn(`[${h.name}] purge: ${message(e)}`);
    }
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
