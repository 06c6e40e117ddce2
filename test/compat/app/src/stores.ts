import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryStore, type StoreBackend } from 'nestjs-priority-queue';

/** A store the app runs on, opened and closed by the app (the library never closes what it is given). */
export interface OpenStore {
  name: string;
  backend: StoreBackend;
  close(): Promise<void>;
}

export type StoreName = 'memory' | 'redis' | 'sqlite';

/**
 * Opens the named store through the library's typed factories. The Redis and TypeORM entry points
 * (and their drivers) are imported only when their store is asked for.
 */
export async function openStore(name: StoreName): Promise<OpenStore> {
  switch (name) {
    case 'memory':
      return { name, backend: memoryStore(), close: async () => undefined };
    case 'redis': {
      const url = process.env.COMPAT_REDIS_URL;
      if (!url) throw new Error('COMPAT_REDIS_URL is not set');
      const [{ Redis }, { redisStore }] = await Promise.all([import('ioredis'), import('nestjs-priority-queue/redis')]);
      const connection = new Redis(url, { maxRetriesPerRequest: null });
      const prefix = `compat-${process.pid}-${Date.now()}`;
      return {
        name,
        backend: redisStore({ connection, prefix }),
        close: async () => {
          await connection.quit();
        },
      };
    }
    case 'sqlite': {
      const [{ DataSource }, { typeormStore }] = await Promise.all([import('typeorm'), import('nestjs-priority-queue/typeorm')]);
      const dir = mkdtempSync(join(tmpdir(), 'pq-compat-sqlite-'));
      const dataSource = new DataSource({ type: 'better-sqlite3', database: join(dir, 'queue.sqlite') });
      await dataSource.initialize();
      return {
        name,
        backend: typeormStore({ dataSource }),
        close: async () => {
          await dataSource.destroy();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  }
}
