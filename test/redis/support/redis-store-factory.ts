import Redis from 'ioredis';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import type { StoreFactory } from '../../contract/task-store.contract';
import { startRedisServer, type RedisServerHandle } from '../../support/servers/redis-server';

/**
 * A StoreFactory on a real redis-server (Debian package, installed when missing; never skipped)
 * started in the caller's beforeAll; each create() gets a fresh key prefix.
 */
export function redisStoreFactory(prefix: string): StoreFactory {
  let server: RedisServerHandle | undefined;
  let connection: Redis | undefined;
  let n = 0;
  beforeAll(async () => {
    server = await startRedisServer();
    connection = new Redis(server.url, { maxRetriesPerRequest: 3 });
  }, 120_000);
  return {
    name: 'redis',
    async create({ clock, agingIntervalMs, historyLimit, fairness }) {
      return new RedisTaskStore({ connection: connection!, prefix: `${prefix}${++n}`, clock, agingIntervalMs, historyLimit, fairness });
    },
    async teardown() {
      connection?.disconnect();
      await server?.stop();
    },
  };
}
