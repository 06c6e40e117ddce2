import type { TaskStore } from '../core/task-store.port';
import { Messages } from '../core/messages';
import { MemoryTaskStore } from '../stores/memory';
import type { StoreConfig } from './priority-queue.options';

type StoreClass = new (options: never) => TaskStore;

export interface CreatedStore {
  store: TaskStore;
  /** The library created it, so it closes it on shutdown. */
  owned: boolean;
}

function isTaskStore(s: unknown): s is TaskStore {
  return !!s && typeof (s as TaskStore).claimSubmissions === 'function' && typeof (s as TaskStore).create === 'function';
}

/**
 * Builds the store the options ask for. The Redis and TypeORM stores are required lazily, so
 * an app on the memory store never loads ioredis or typeorm.
 */
export function createStore(config: StoreConfig | TaskStore | undefined): CreatedStore {
  if (isTaskStore(config)) return { store: config, owned: false };
  const c: StoreConfig = config ?? { type: 'memory' };
  switch (c.type) {
    case 'memory':
      return { store: new MemoryTaskStore({ agingIntervalMs: c.agingIntervalMs }), owned: true };
    case 'redis': {
      const { RedisTaskStore } = loadDriverStore<{ RedisTaskStore: StoreClass }>('../stores/redis', 'ioredis', 'Redis');
      return { store: new RedisTaskStore(c as never), owned: true };
    }
    case 'typeorm': {
      const { TypeOrmTaskStore } = loadDriverStore<{ TypeOrmTaskStore: StoreClass }>('../stores/typeorm', 'typeorm', 'TypeORM');
      return { store: new TypeOrmTaskStore(c as never), owned: true };
    }
    default:
      throw new Error(Messages.unknownStoreType((c as { type?: unknown }).type));
  }
}

function loadDriverStore<T>(path: string, driver: string, name: string): T {
  try {
    require.resolve(driver);
  } catch {
    throw new Error(Messages.driverMissing(driver, name));
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path) as T;
}
