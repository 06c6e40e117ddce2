import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { TaskEvents } from '../core/events';
import type { TaskStore } from '../core/task-store.port';
import { PRIORITY_QUEUE_EVENTS, PRIORITY_QUEUE_STORE } from './priority-queue.constants';
import { PRIORITY_QUEUE_OPTIONS } from './priority-queue.module-definition';
import type { PriorityQueueModuleOptions } from './priority-queue.options';

type PromClient = typeof import('prom-client');
type Registry = import('prom-client').Registry;

/**
 * Prometheus metrics (prom-client, loaded only when `metrics` is set): a counter of every status
 * transition made by this process, and gauges read from store.stats() at scrape time (queue-wide,
 * the same from every process).
 */
@Injectable()
export class PriorityQueueMetrics implements OnModuleInit, OnModuleDestroy {
  /** The registry the metrics are in; serve `await registry.metrics()` on your /metrics route. */
  registry: Registry | null = null;
  private off: (() => void) | null = null;

  constructor(
    @Inject(PRIORITY_QUEUE_OPTIONS) private readonly options: PriorityQueueModuleOptions,
    @Inject(PRIORITY_QUEUE_STORE) private readonly store: TaskStore,
    @Inject(PRIORITY_QUEUE_EVENTS) private readonly events: TaskEvents,
  ) {}

  onModuleInit(): void {
    const opt = this.options.metrics;
    if (!opt) return;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const prom = require('prom-client') as PromClient;
    const registry = (typeof opt === 'object' && opt.registry ? opt.registry : new prom.Registry()) as Registry;
    const prefix = (typeof opt === 'object' && opt.prefix) || 'priority_queue_';
    const transitions = new prom.Counter({
      name: `${prefix}transitions_total`,
      help: 'Task status transitions made by this process',
      labelNames: ['type', 'from', 'to'],
      registers: [registry],
    });
    this.off = this.events.on((e) => transitions.inc({ type: e.type, from: e.from ?? 'NEW', to: e.to }));
    const store = this.store;
    let last: ReturnType<TaskStore['stats']> | null = null;
    const stats = () => (last ??= store.stats().finally(() => setImmediate(() => (last = null))));
    new prom.Gauge({
      name: `${prefix}tasks`,
      help: 'Tasks per status',
      labelNames: ['status'],
      registers: [registry],
      async collect() {
        const s = await stats();
        for (const [status, n] of Object.entries(s.byStatus)) this.set({ status }, n);
      },
    });
    new prom.Gauge({
      name: `${prefix}pending`,
      help: 'PENDING_SUBMIT tasks per priority',
      labelNames: ['priority'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const p of (await stats()).pending) this.set({ priority: String(p.priority) }, p.count);
      },
    });
    new prom.Gauge({
      name: `${prefix}oldest_wait_seconds`,
      help: 'Wait of the oldest due task per priority',
      labelNames: ['priority'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const p of (await stats()).pending) this.set({ priority: String(p.priority) }, p.oldestWaitMs / 1000);
      },
    });
    new prom.Gauge({
      name: `${prefix}in_flight`,
      help: 'Tasks in SUBMITTING, SUBMITTED or RUNNING per provider',
      labelNames: ['provider'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const [provider, n] of Object.entries((await stats()).inFlightByProvider)) this.set({ provider }, n);
      },
    });
    this.registry = registry;
  }

  onModuleDestroy(): void {
    this.off?.();
    this.off = null;
  }
}
