import { ConfigurationError } from '../core/errors';
import { Messages } from '../core/messages';
import { isStoreBackend, STORE_BACKEND, type StoreBackend } from '../core/store-backend';
import type { TaskStore } from '../core/task-store.port';
import { memoryStore } from '../stores/memory/memory-store.factory';
import { DEFAULT_QUEUE_NAME } from './priority-queue.constants';
import type { StoreConfig } from './priority-queue.options';

export interface ResolvedBackend {
  backend: StoreBackend;
  /** Name of the default queue inside the backend (a StoreConfig's `queue`, else `default`). */
  defaultQueue: string;
  /** Aging of queues that set none (a StoreConfig's `agingIntervalMs`). */
  agingIntervalMs?: number;
}

export function isTaskStore(s: unknown): s is TaskStore {
  return !!s && typeof (s as TaskStore).claimSubmissions === 'function' && typeof (s as TaskStore).create === 'function';
}

/**
 * The backend the `store` option asks for. The Redis and TypeORM stores are required lazily, so
 * an app on the memory store never loads ioredis or typeorm.
 */
export function createBackend(config: StoreConfig | TaskStore | StoreBackend | undefined): ResolvedBackend {
  if (config === undefined) return { backend: memoryStore(), defaultQueue: DEFAULT_QUEUE_NAME };
  if (isStoreBackend(config)) return { backend: config, defaultQueue: DEFAULT_QUEUE_NAME };
  if (isTaskStore(config)) return { backend: singleStoreBackend(config), defaultQueue: DEFAULT_QUEUE_NAME };
  if (typeof config !== 'object' || config === null) throw new ConfigurationError(Messages.unknownStoreType(typeof config === 'string' ? JSON.stringify(config) : config));
  const c: StoreConfig = config;
  switch (c.type) {
    case 'memory':
      return { backend: memoryStore(), defaultQueue: DEFAULT_QUEUE_NAME, agingIntervalMs: c.agingIntervalMs };
    case 'redis': {
      const { redisBackend } = loadDriverStore<typeof import('../stores/redis/redis-store.factory')>('../stores/redis/redis-store.factory', 'ioredis', 'Redis');
      return { backend: redisBackend(c.connection, false, { prefix: c.prefix }), defaultQueue: c.queue ?? DEFAULT_QUEUE_NAME, agingIntervalMs: c.agingIntervalMs };
    }
    case 'typeorm': {
      const { typeormStore } = loadDriverStore<typeof import('../stores/typeorm/typeorm-store.factory')>('../stores/typeorm/typeorm-store.factory', 'typeorm', 'TypeORM');
      return {
        backend: typeormStore({ dataSource: c.dataSource as never, tablePrefix: c.tablePrefix }),
        defaultQueue: c.queue ?? DEFAULT_QUEUE_NAME,
        agingIntervalMs: c.agingIntervalMs,
      };
    }
    default:
      throw new ConfigurationError(Messages.unknownStoreType((c as { type?: unknown }).type));
  }
}

/** A TaskStore instance the app passed: it is the default queue, never closed; no other queue can live in it. */
function singleStoreBackend(store: TaskStore): StoreBackend {
  return {
    [STORE_BACKEND]: true,
    kind: 'instance',
    describe: () => `the TaskStore instance given to forRoot (${store.constructor?.name ?? 'TaskStore'})`,
    open: async () => undefined,
    close: async () => undefined,
    store(queue: string): TaskStore {
      if (queue !== DEFAULT_QUEUE_NAME) throw new ConfigurationError(Messages.singleStoreQueues(queue));
      return store;
    },
    release: async () => undefined,
  };
}

function loadDriverStore<T>(path: string, driver: string, name: string): T {
  try {
    require.resolve(driver);
  } catch {
    throw new ConfigurationError(Messages.driverMissing(driver, name));
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path) as T;
}
