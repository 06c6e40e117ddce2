import Redis, { type RedisOptions } from 'ioredis';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import type { StoreFactory } from '../../contract/task-store.contract';
import { startRedisServer, type RedisServerHandle } from '../../support/servers/redis-server';

/** The DESIGN §7 policies RedisTaskStore implements (its `policies`): fair share and deadline boosts. */
export const REDIS_POLICIES = { fairness: true, boost: true };

/**
 * Extra ioredis options from PQ_TEST_REDIS_OPTIONS (JSON): the compatibility matrix runs the Redis
 * contract on ioredis 6 with `{"replyMapping":"resp3"}` too (test/compat/next-drivers.ts).
 */
function clientOptionsFromEnv(): RedisOptions {
  const raw = process.env.PQ_TEST_REDIS_OPTIONS;
  return raw ? (JSON.parse(raw) as RedisOptions) : {};
}

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
    connection = new Redis(server.url, { maxRetriesPerRequest: 3, ...clientOptionsFromEnv() });
  }, 120_000);
  return {
    name: 'redis',
    policies: REDIS_POLICIES,
    async create({ clock, agingIntervalMs, historyLimit, fairness }) {
      return new RedisTaskStore({ connection: connection!, prefix: `${prefix}${++n}`, clock, agingIntervalMs, historyLimit, fairness });
    },
    async teardown() {
      connection?.disconnect();
      await server?.stop();
    },
  };
}
