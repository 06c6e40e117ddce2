import type { DataSource } from 'typeorm';
import { ConfigurationError } from '../../core/errors';
import { Messages } from '../../core/messages';
import { OpenCount, STORE_BACKEND, type QueueStoreOptions, type StoreBackend } from '../../core/store-backend';
import type { TaskStore } from '../../core/task-store.port';
import { DEFAULT_HISTORY_LIMIT } from '../../core/history';
import { validateHistoryLimit } from '../../core/validation';
import { assertDataSource } from './data-source-check';
import { TypeOrmTaskStore } from './typeorm-task-store';

export interface TypeOrmStoreOptions {
  /** A DataSource you own (e.g. injected from @nestjs/typeorm): the library never closes it. */
  dataSource: DataSource;
  /** Prefix of every table of the store (default `pq_`); the queues share the tables. */
  tablePrefix?: string;
  /**
   * Run the store's migrations at start-up (default true). Set false when your own migration run
   * includes priorityQueueMigrations().
   */
  migrate?: boolean;
  /** SQLite: switch a rollback-journal database to WAL at start-up (default true). */
  tuneSqlite?: boolean;
  /**
   * Status transitions each queue's store keeps per task for TaskManager.history() and the
   * dashboard's task page (0 = off, at most 1000). Default 20; fixed per task when it is created.
   */
  historyLimit?: number;
  /**
   * MySQL / MariaDB and SQLite: how often (ms) the store looks for work made by other processes
   * while workers are subscribed (default 2000; 0 = never, the workers' safety poll then finds it).
   */
  wakePollMs?: number;
}

export interface TypeOrmStoreBackend extends StoreBackend {
  readonly kind: 'typeorm';
  readonly dataSource: DataSource;
}

/**
 * The TypeORM backend of PriorityQueueModule.forRoot({ store: typeormStore({...}) }): one
 * TypeOrmTaskStore per queue in the same tables (each row carries its queue), on a DataSource
 * you own.
 */
export function typeormStore(options: TypeOrmStoreOptions): TypeOrmStoreBackend {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError(Messages.factoryArgument('typeormStore', options, TYPEORM_STORE_FORM));
  }
  assertDataSource(options.dataSource, 'typeormStore({ dataSource })');
  const { dataSource, tablePrefix, migrate, tuneSqlite, wakePollMs } = options;
  const historyLimit = validateHistoryLimit(options.historyLimit, DEFAULT_HISTORY_LIMIT);
  const count = new OpenCount(async () => undefined, async () => undefined);
  return {
    [STORE_BACKEND]: true,
    kind: 'typeorm',
    dataSource,
    describe: () => `TypeORM (${String((dataSource.options as { type?: unknown }).type)})`,
    open: () => count.open(),
    close: () => count.close(),
    store(queue: string, o: QueueStoreOptions): TaskStore {
      return new TypeOrmTaskStore({ dataSource, tablePrefix, migrate, tuneSqlite, wakePollMs, queue, agingIntervalMs: o.agingIntervalMs, fairness: o.fairness, historyLimit });
    },
    release: (store: TaskStore) => store.close(),
  };
}

const TYPEORM_STORE_FORM = "typeormStore({ dataSource, tablePrefix?: 'pq_', migrate?: true })";
