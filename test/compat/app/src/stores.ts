import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreConfig } from 'nestjs-priority-queue';

/** A store the app runs on, opened and closed by the app (the library never closes what it is given). */
export interface OpenStore {
  name: string;
  config: StoreConfig;
  close(): Promise<void>;
}

export type StoreName = 'memory' | 'redis' | 'sqlite';

/** Opens the named store. Drivers are imported only when their store is asked for. */
export async function openStore(name: StoreName): Promise<OpenStore> {
  switch (name) {
    case 'memory':
      return { name, config: { type: 'memory' }, close: async () => undefined };
    case 'redis': {
      const url = process.env.COMPAT_REDIS_URL;
      if (!url) throw new Error('COMPAT_REDIS_URL is not set');
      const { Redis } = await import('ioredis');
      const connection = new Redis(url, { maxRetriesPerRequest: null });
      const prefix = `compat-${process.pid}-${Date.now()}`;
      return {
        name,
        config: { type: 'redis', connection, prefix },
        close: async () => {
          await connection.quit();
        },
      };
    }
    case 'sqlite': {
      const { DataSource } = await import('typeorm');
      const dir = mkdtempSync(join(tmpdir(), 'pq-compat-sqlite-'));
      const dataSource = new DataSource({ type: 'better-sqlite3', database: join(dir, 'queue.sqlite') });
      await dataSource.initialize();
      return {
        name,
        config: { type: 'typeorm', dataSource },
        close: async () => {
          await dataSource.destroy();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  }
}
