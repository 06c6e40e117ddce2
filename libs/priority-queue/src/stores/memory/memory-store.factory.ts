import { ValidationError } from '../../core/errors';
import { Messages } from '../../core/messages';
import { OpenCount, STORE_BACKEND, type QueueStoreOptions, type StoreBackend } from '../../core/store-backend';
import type { Clock, TaskStore } from '../../core/task-store.port';
import { DEFAULT_HISTORY_LIMIT } from '../../core/history';
import { validateAgingInterval, validateFairness, validateHistoryLimit } from '../../core/validation';
import { MemoryTaskStore } from './memory-task-store';

export interface MemoryStoreOptions {
  /** Test clock for every queue of the backend. */
  clock?: Clock;
  /**
   * Status transitions each queue's store keeps per task for TaskManager.history() and the
   * dashboard's task page (0 = off, at most 1000). Default 20.
   */
  historyLimit?: number;
}

/**
 * The in-memory backend (the default): one MemoryTaskStore per queue name, kept for the life of
 * the backend, so that applications of one process given the same backend share their queues.
 * Nothing survives the process.
 */
export function memoryStore(options: MemoryStoreOptions = {}): StoreBackend {
  if (typeof options !== 'object' || options === null) throw new TypeError(Messages.factoryArgument('memoryStore', options, 'memoryStore() or memoryStore({ clock, historyLimit })'));
  const historyLimit = validateHistoryLimit(options.historyLimit, DEFAULT_HISTORY_LIMIT);
  const stores = new Map<string, { store: MemoryTaskStore; users: number }>();
  const count = new OpenCount(
    async () => undefined,
    async () => {
      const all = [...stores.values()];
      stores.clear();
      await Promise.all(all.map((s) => s.store.close()));
    },
  );
  return {
    [STORE_BACKEND]: true,
    kind: 'memory',
    describe: () => 'the in-memory store',
    open: () => count.open(),
    close: () => count.close(),
    store(queue: string, o: QueueStoreOptions): TaskStore {
      const aging = validateAgingInterval(o.agingIntervalMs);
      const existing = stores.get(queue);
      if (existing) {
        if (existing.store.agingIntervalMs !== aging) throw new ValidationError(Messages.agingMismatch(queue, existing.store.agingIntervalMs, aging));
        const fairness = validateFairness(o.fairness);
        if (existing.store.fairness !== fairness) throw new ValidationError(Messages.fairnessMismatch(queue, existing.store.fairness, fairness));
        existing.users++;
        return existing.store;
      }
      const store = new MemoryTaskStore({ agingIntervalMs: aging, fairness: o.fairness, clock: options.clock, queue, historyLimit });
      stores.set(queue, { store, users: 1 });
      return store;
    },
    async release(store: TaskStore): Promise<void> {
      for (const [name, entry] of stores) {
        if (entry.store !== store) continue;
        if (--entry.users === 0) {
          stores.delete(name);
          await store.close();
        }
        return;
      }
    },
  };
}
