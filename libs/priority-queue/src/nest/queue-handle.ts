import { TaskEvents } from '../core/events';
import { QueueEventHub } from '../core/event-hub';
import type { TaskEventTransport } from '../core/event-transport.port';
import { InProcessEventTransport } from '../core/in-process-transport';
import { PriorityQueue } from '../core/queue';
import { TaskTypeRegistry } from '../core/registry';
import type { TaskStore } from '../core/task-store.port';
import type { Worker } from '../core/worker';
import { AdmissionGuard } from './admission-guard.service';
import type { QueueOptions } from './priority-queue.options';
import type { QueueLog } from './queue-log';
import { TaskManager } from './task-manager.service';

export interface QueueHandleInit {
  /** Name in the application (`default` for forRoot's queue). */
  name: string;
  /** Name inside the store backend. */
  storeQueue: string;
  options: QueueOptions;
  store: TaskStore;
  /** Gives the store back (to its backend) at shutdown. */
  release(): Promise<void>;
  log: QueueLog;
  /** Which queue of the application owns a task type (for WrongQueueError). */
  queueOf(type: string): string | undefined;
}

/**
 * One queue of the application at runtime: its store, task types, events (local and
 * cross-process), TaskManager and AdmissionGuard, and the worker once started.
 */
export class QueueHandle {
  readonly name: string;
  readonly storeQueue: string;
  readonly options: QueueOptions;
  readonly store: TaskStore;
  readonly registry = new TaskTypeRegistry();
  readonly events = new TaskEvents();
  readonly core: PriorityQueue;
  readonly hub: QueueEventHub;
  readonly taskManager: TaskManager;
  readonly admissionGuard: AdmissionGuard;
  /** Handlers registered in this process (the worker starts only with one at least). */
  handlers = 0;
  worker: Worker | null = null;
  readonly release: () => Promise<void>;

  constructor(init: QueueHandleInit) {
    this.name = init.name;
    this.storeQueue = init.storeQueue;
    this.options = init.options;
    this.store = init.store;
    this.release = init.release;
    this.registry.owner = { queue: init.name, queueOf: init.queueOf };
    this.registry.setQueueRemoval(this.options);
    this.core = new PriorityQueue({ store: this.store, registry: this.registry, events: this.events, maxPayloadBytes: this.options.maxPayloadBytes });
    this.hub = new QueueEventHub({
      events: this.events,
      transport: transportOf(this.store),
      publish: this.options.events?.publish ?? true,
      onError: (e) => init.log.warn(`[${init.name}] events: ${e instanceof Error ? e.message : String(e)}`),
    });
    this.taskManager = new TaskManager(this.core, { queue: this.name, subscribe: (s) => this.hub.subscribe(s) });
    this.admissionGuard = new AdmissionGuard(this.store);
    for (const { type, ...options } of this.options.taskTypes ?? []) this.registry.register(type, options, null, 'options');
    this.events.on(init.log.transitions(init.name));
    this.hub.start();
  }
}

function transportOf(store: TaskStore): TaskEventTransport {
  const s = store as TaskStore & { createEventTransport?(): TaskEventTransport };
  return typeof s.createEventTransport === 'function' ? s.createEventTransport() : new InProcessEventTransport(store, 'events');
}
