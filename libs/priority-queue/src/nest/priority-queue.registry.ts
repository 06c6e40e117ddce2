import { Injectable } from '@nestjs/common';
import { ConfigurationError, QueueNotFoundError } from '../core/errors';
import { Messages } from '../core/messages';
import type { TaskStore } from '../core/task-store.port';
import type { AdmissionGuard } from './admission-guard.service';
import { DEFAULT_QUEUE_NAME } from './priority-queue.constants';
import type { PriorityQueueModuleOptions } from './priority-queue.options';
import type { QueueHandle } from './queue-handle';
import { QueueLog } from './queue-log';
import type { ResolvedBackend } from './store.factory';
import type { TaskManager } from './task-manager.service';

const QUEUE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Every queue of the application, by name (injectable anywhere): `names()`, and each queue's
 * TaskManager, AdmissionGuard and TaskStore. The module also uses it to refuse a second
 * forRoot() and a queue registered twice.
 */
@Injectable()
export class PriorityQueueRegistry {
  private readonly queues = new Map<string, QueueHandle>();
  /** Queue names taken (in the app and inside the backend), before their handles exist. */
  private readonly taken = new Map<string, string>();
  private rootBackend: ResolvedBackend | null = null;
  private rootOptions: PriorityQueueModuleOptions = {};
  /** @internal The library's log (threshold from forRoot's logLevel). */
  log = new QueueLog();

  /** Names of the registered queues: `default` (forRoot's) first when present, then the others by name. */
  names(): string[] {
    return [...this.queues.keys()].sort((a, b) => (a === DEFAULT_QUEUE_NAME ? -1 : b === DEFAULT_QUEUE_NAME ? 1 : a < b ? -1 : a > b ? 1 : 0));
  }

  has(name: string): boolean {
    return this.queues.has(name);
  }

  taskManager(name: string = DEFAULT_QUEUE_NAME): TaskManager {
    return this.handle(name).taskManager;
  }

  admissionGuard(name: string = DEFAULT_QUEUE_NAME): AdmissionGuard {
    return this.handle(name).admissionGuard;
  }

  store(name: string = DEFAULT_QUEUE_NAME): TaskStore {
    return this.handle(name).store;
  }

  /** @internal The runtime of one queue (for the library's own services). */
  handle(name: string): QueueHandle {
    const h = this.queues.get(name);
    if (!h) throw new QueueNotFoundError(String(name), this.names());
    return h;
  }

  /** @internal Every queue's runtime, in names() order. */
  handles(): QueueHandle[] {
    return this.names().map((n) => this.queues.get(n)!);
  }

  /** @internal forRoot's backend and options; a second forRoot in the same application is an error. */
  get root(): { backend: ResolvedBackend | null; options: PriorityQueueModuleOptions } {
    return { backend: this.rootBackend, options: this.rootOptions };
  }

  /** @internal */
  claimRoot(backend: ResolvedBackend, options: PriorityQueueModuleOptions): void {
    if (this.rootBackend) throw new ConfigurationError(Messages.rootImportedTwice());
    this.rootBackend = backend;
    this.rootOptions = options;
    this.log = new QueueLog(options.logLevel);
  }

  /** @internal Takes a queue name before its store is made: a name registered twice is an error. */
  reserve(name: string, storeQueue: string): void {
    if (typeof name !== 'string' || !QUEUE_NAME.test(name)) throw new ConfigurationError(Messages.badQueueName(name));
    if (this.taken.has(name)) throw new ConfigurationError(Messages.queueRegisteredTwice(name));
    for (const [other, stored] of this.taken) {
      if (stored === storeQueue) throw new ConfigurationError(Messages.queueStoredTwice(name, other, stored));
    }
    this.taken.set(name, storeQueue);
  }

  /** @internal */
  add(handle: QueueHandle): void {
    this.queues.set(handle.name, handle);
  }

  /** @internal Forgets a reserved name whose queue could not be made. */
  unreserve(name: string): void {
    this.taken.delete(name);
  }

  /** The queue whose registry knows `type` (a handler or a declared type), if any. */
  queueOfType(type: string): string | undefined {
    for (const h of this.queues.values()) if (h.registry.get(type)) return h.name;
    return undefined;
  }
}
