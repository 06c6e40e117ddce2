import type { Provider } from '@nestjs/common';
import { ConfigurationError } from '../core/errors';
import { Messages } from '../core/messages';
import { validateRemovalOptions } from '../core/removal';
import type { TaskStore } from '../core/task-store.port';
import { AdmissionGuard } from './admission-guard.service';
import {
  DEFAULT_QUEUE_NAME,
  PRIORITY_QUEUE_BACKEND,
  PRIORITY_QUEUE_CORE,
  PRIORITY_QUEUE_EVENTS,
  PRIORITY_QUEUE_REGISTRY,
  PRIORITY_QUEUE_STORE,
} from './priority-queue.constants';
import { PRIORITY_QUEUE_OPTIONS } from './priority-queue.module-definition';
import type { PriorityQueueModuleOptions, QueueOptions, RegisterQueueOptions } from './priority-queue.options';
import { PriorityQueueRegistry } from './priority-queue.registry';
import { QueueHandle } from './queue-handle';
import { getAdmissionGuardToken, getQueueHandleToken, getQueueOptionsToken, getTaskManagerToken, getTaskStoreToken } from './queue-tokens';
import { createBackend, type ResolvedBackend } from './store.factory';
import { TaskManager } from './task-manager.service';

/** Options a named queue takes from forRoot unless it sets them itself. */
function inherited(root: PriorityQueueModuleOptions | undefined, own: QueueOptions): QueueOptions {
  return {
    ...own,
    workers: { ...root?.workers, ...own.workers },
    maxPayloadBytes: own.maxPayloadBytes ?? root?.maxPayloadBytes,
    retentionMs: own.retentionMs ?? root?.retentionMs,
    purgeEveryMs: own.purgeEveryMs ?? root?.purgeEveryMs,
    removeOnComplete: own.removeOnComplete ?? root?.removeOnComplete,
    removeOnFail: own.removeOnFail ?? root?.removeOnFail,
    events: { ...root?.events, ...own.events },
  };
}

/** Makes a queue's store (from the backend, or the one given), initialises it and registers the queue. */
async function createQueueHandle(
  registry: PriorityQueueRegistry,
  name: string,
  options: QueueOptions,
  source: { backend: ResolvedBackend; storeQueue: string } | { store: TaskStore },
): Promise<QueueHandle> {
  const storeQueue = 'backend' in source ? source.storeQueue : `(own store of ${name})`;
  validateRemovalOptions(options, 'the queue'); // before a store is opened: nothing to give back
  registry.reserve(name, storeQueue);
  let store: TaskStore;
  let release: () => Promise<void>;
  try {
    if ('backend' in source) {
      const { backend } = source.backend;
      store = backend.store(storeQueue, { agingIntervalMs: options.agingIntervalMs ?? source.backend.agingIntervalMs, fairness: options.fairness });
      release = () => backend.release(store);
    } else {
      store = source.store;
      release = async () => undefined; // the app's own store: never closed by the library
    }
    try {
      await store.init();
    } catch (e) {
      await release().catch(() => undefined);
      throw e;
    }
  } catch (e) {
    registry.unreserve(name);
    throw e;
  }
  const handle = new QueueHandle({ name, storeQueue, options, store, release, log: registry.log, queueOf: (t) => registry.queueOfType(t) });
  registry.add(handle);
  return handle;
}

/** The services of one queue, each read from its handle. */
function serviceProviders(name: string): Provider[] {
  const handle = getQueueHandleToken(name);
  return [
    { provide: getTaskManagerToken(name), inject: [handle], useFactory: (h: QueueHandle) => h.taskManager },
    { provide: getAdmissionGuardToken(name), inject: [handle], useFactory: (h: QueueHandle) => h.admissionGuard },
    { provide: getTaskStoreToken(name), inject: [handle], useFactory: (h: QueueHandle) => h.store },
  ];
}

export function serviceTokens(name: string) {
  return [getTaskManagerToken(name), getAdmissionGuardToken(name), getTaskStoreToken(name)];
}

/** forRoot's providers: the backend and the default queue (with today's class and symbol tokens). */
export function rootProviders(): Provider[] {
  const handle = getQueueHandleToken(DEFAULT_QUEUE_NAME);
  return [
    {
      provide: PRIORITY_QUEUE_BACKEND,
      inject: [PriorityQueueRegistry, PRIORITY_QUEUE_OPTIONS],
      useFactory: async (registry: PriorityQueueRegistry, options: PriorityQueueModuleOptions): Promise<ResolvedBackend> => {
        const resolved = createBackend(options.store);
        registry.claimRoot(resolved, options);
        await resolved.backend.open((m) => registry.log.warn(m));
        return resolved;
      },
    },
    {
      provide: handle,
      inject: [PriorityQueueRegistry, PRIORITY_QUEUE_BACKEND, PRIORITY_QUEUE_OPTIONS],
      useFactory: (registry: PriorityQueueRegistry, backend: ResolvedBackend, options: PriorityQueueModuleOptions) => {
        const { store: _store, metrics: _metrics, logLevel: _logLevel, ...queue } = options;
        const own: QueueOptions = { ...queue, agingIntervalMs: queue.agingIntervalMs ?? backend.agingIntervalMs };
        return createQueueHandle(registry, DEFAULT_QUEUE_NAME, own, { backend, storeQueue: backend.defaultQueue });
      },
    },
    ...serviceProviders(DEFAULT_QUEUE_NAME),
    { provide: PRIORITY_QUEUE_CORE, inject: [handle], useFactory: (h: QueueHandle) => h.core },
    { provide: PRIORITY_QUEUE_EVENTS, inject: [handle], useFactory: (h: QueueHandle) => h.events },
    { provide: PRIORITY_QUEUE_REGISTRY, inject: [handle], useFactory: (h: QueueHandle) => h.registry },
  ];
}

export const ROOT_EXPORTS = [
  TaskManager,
  AdmissionGuard,
  PRIORITY_QUEUE_STORE,
  PRIORITY_QUEUE_EVENTS,
  PRIORITY_QUEUE_CORE,
  PRIORITY_QUEUE_REGISTRY,
  PRIORITY_QUEUE_BACKEND,
  PRIORITY_QUEUE_OPTIONS,
];

/** registerQueue's providers of one queue; `optionsProvider` provides getQueueOptionsToken(name). */
export function queueProviders(name: string): Provider[] {
  return [
    {
      provide: getQueueHandleToken(name),
      inject: [
        PriorityQueueRegistry,
        getQueueOptionsToken(name),
        { token: PRIORITY_QUEUE_BACKEND, optional: true },
        { token: PRIORITY_QUEUE_OPTIONS, optional: true },
      ],
      useFactory: (
        registry: PriorityQueueRegistry,
        own: Omit<RegisterQueueOptions, 'name' | 'isGlobal'>,
        backend: ResolvedBackend | undefined,
        root: PriorityQueueModuleOptions | undefined,
      ) => {
        const { store, ...queue } = own ?? {};
        const options = inherited(root, queue);
        if (store !== undefined) return createQueueHandle(registry, name, options, { store });
        if (!backend) throw new ConfigurationError(Messages.rootMissing(name));
        return createQueueHandle(registry, name, options, { backend, storeQueue: name });
      },
    },
    ...serviceProviders(name),
  ];
}
