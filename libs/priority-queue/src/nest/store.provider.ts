import type { Provider } from '@nestjs/common';
import type { TaskStore } from '../core/task-store.port';
import { PRIORITY_QUEUE_STORE } from './priority-queue.constants';
import { PRIORITY_QUEUE_OPTIONS } from './priority-queue.module-definition';
import type { PriorityQueueModuleOptions } from './priority-queue.options';
import { createStore } from './store.factory';

/** Stores the library created (and so closes on shutdown); a store the app passed stays open. */
export const OWNED_STORES = new WeakSet<TaskStore>();

/** The active store, injectable with @Inject(PRIORITY_QUEUE_STORE) or @InjectTaskStore(). */
export const StoreProvider: Provider = {
  provide: PRIORITY_QUEUE_STORE,
  inject: [PRIORITY_QUEUE_OPTIONS],
  useFactory: async (options: PriorityQueueModuleOptions): Promise<TaskStore> => {
    const { store, owned } = createStore(options.store);
    await store.init();
    if (owned) OWNED_STORES.add(store);
    return store;
  },
};
