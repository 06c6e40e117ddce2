import { memoryStore, type StoreBackend } from 'nestjs-priority-queue';
// the store entry points load their driver only when a store is made
import { redisStore } from 'nestjs-priority-queue/redis';
import { typeormStore } from 'nestjs-priority-queue/typeorm';
import type { StoreSelection } from './store-selection';

/**
 * The connection the demo owns (a TypeORM DataSource or an ioredis client) and the store
 * backend handed to PriorityQueueModule (its queues `ocr` and `maintenance` live in it). The
 * library never closes a connection it was given, so the demo closes it after the application
 * has shut down.
 */
export interface StoreConnection {
  config: StoreBackend;
  close(): Promise<void>;
}

/** Opens the connection PQ_STORE asks for. Drivers are required only when selected. */
export async function openStoreConnection(selection: StoreSelection): Promise<StoreConnection> {
  switch (selection.kind) {
    case 'memory':
      return { config: memoryStore(), close: async () => undefined };
    case 'redis':
      return openRedis(selection.url);
    case 'sqlite':
      return openTypeOrm({ type: 'better-sqlite3', database: selection.path });
    case 'postgres':
      return openTypeOrm({ type: 'postgres', url: selection.url });
    case 'mysql':
      return openTypeOrm({ type: 'mysql', url: selection.url });
  }
}

async function openRedis(url: string): Promise<StoreConnection> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { default: Redis } = require('ioredis') as typeof import('ioredis');
  const connection = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  await connection.connect();
  return {
    config: redisStore({ connection, prefix: 'demo' }),
    close: async () => {
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}

async function openTypeOrm(options: Record<string, unknown>): Promise<StoreConnection> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DataSource } = require('typeorm') as typeof import('typeorm');
  const dataSource = new DataSource({ ...options, entities: [], synchronize: false, logging: false } as never);
  await dataSource.initialize();
  return {
    config: typeormStore({ dataSource, tablePrefix: 'demo_' }),
    close: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}
