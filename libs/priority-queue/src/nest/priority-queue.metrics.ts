import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ConfigurationError } from '../core/errors';
import { Messages } from '../core/messages';
import type { QueueStats } from '../core/task-store.port';
import { PriorityQueueRegistry } from './priority-queue.registry';

/** What the library needs of a prom-client Registry (no prom-client type in the public API). */
export interface MetricsRegistry {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/* Only the parts of prom-client used here, so that no prom-client type reaches the .d.ts. */
interface GaugeThis {
  set(labels: Record<string, string>, value: number): void;
  reset(): void;
}
interface PromClient {
  Registry: new () => MetricsRegistry;
  Counter: new (c: { name: string; help: string; labelNames: string[]; registers: unknown[] }) => { inc(labels: Record<string, string>): void };
  Gauge: new (c: { name: string; help: string; labelNames: string[]; registers: unknown[]; collect(this: GaugeThis): Promise<void> }) => unknown;
}

function loadPromClient(): PromClient {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('prom-client') as PromClient;
  } catch (e) {
    if ((e as { code?: string }).code === 'MODULE_NOT_FOUND') throw new ConfigurationError(Messages.promClientMissing());
    throw e;
  }
}

/**
 * Prometheus metrics (prom-client, loaded only when `metrics` is set), every series labelled with
 * its queue: a counter of every status transition made by this process, and gauges read from each
 * queue's stats() at scrape time (queue-wide, the same from every process).
 */
@Injectable()
export class PriorityQueueMetrics implements OnModuleInit, OnModuleDestroy {
  /** The registry the metrics are in; serve `await registry.metrics()` on your /metrics route. */
  registry: MetricsRegistry | null = null;
  private readonly offs: Array<() => void> = [];

  constructor(private readonly queues: PriorityQueueRegistry) {}

  onModuleInit(): void {
    const opt = this.queues.root.options.metrics;
    if (!opt || this.registry) return;
    const prom = loadPromClient();
    const registry = (typeof opt === 'object' && opt.registry ? opt.registry : new prom.Registry()) as MetricsRegistry;
    const prefix = (typeof opt === 'object' && opt.prefix) || 'priority_queue_';
    const transitions = new prom.Counter({
      name: `${prefix}transitions_total`,
      help: 'Task status transitions made by this process',
      labelNames: ['queue', 'type', 'from', 'to'],
      registers: [registry],
    });
    for (const h of this.queues.handles()) {
      const queue = h.name;
      this.offs.push(h.events.on((e) => e.boostedFrom === undefined && transitions.inc({ queue, type: e.type, from: e.from ?? 'NEW', to: e.to })));
    }
    const handles = () => this.queues.handles();
    // one stats() per queue per scrape, shared by the gauges
    let last: Promise<Array<[string, QueueStats]>> | null = null;
    const stats = () => (last ??= Promise.all(handles().map(async (h): Promise<[string, QueueStats]> => [h.name, await h.store.stats()])).finally(() => setImmediate(() => (last = null))));
    const gauge = (name: string, help: string, label: string, fill: (set: (labels: Record<string, string>, n: number) => void, s: QueueStats) => void) =>
      new prom.Gauge({
        name: `${prefix}${name}`,
        help,
        labelNames: ['queue', label],
        registers: [registry],
        async collect() {
          const all = await stats();
          this.reset();
          for (const [queue, s] of all) fill((labels, n) => this.set({ queue, ...labels }, n), s);
        },
      });
    gauge('tasks', 'Tasks per status', 'status', (set, s) => {
      for (const [status, n] of Object.entries(s.byStatus)) set({ status }, n);
    });
    gauge('pending', 'PENDING_SUBMIT tasks per priority', 'priority', (set, s) => {
      for (const p of s.pending) set({ priority: String(p.priority) }, p.count);
    });
    gauge('oldest_wait_seconds', 'Wait of the oldest due task per priority', 'priority', (set, s) => {
      for (const p of s.pending) set({ priority: String(p.priority) }, p.oldestWaitMs / 1000);
    });
    gauge('in_flight', 'Tasks in SUBMITTING, SUBMITTED or RUNNING per provider', 'provider', (set, s) => {
      for (const [provider, n] of Object.entries(s.inFlightByProvider)) set({ provider }, n);
    });
    this.registry = registry;
  }

  onModuleDestroy(): void {
    for (const off of this.offs.splice(0)) off();
  }
}
