import IORedis from 'ioredis';
import { RedisTaskStore } from '../../../libs/priority-queue/src/stores/redis/redis-task-store';
import type { BenchEnv, BenchTarget } from '../target';
import { benchHistoryLimit, ourTarget, variantId, type OurVariant } from './ours';

/** Our Redis store, one key prefix per scenario, on the same redis-server as BullMQ. */
export function ourRedisTarget(env: BenchEnv, variant: OurVariant = {}): BenchTarget {
  if (!env.redis) throw new Error('ours-redis needs a Redis server');
  const url = env.redis.url;
  const connections: IORedis[] = [];
  let admin: IORedis | null = null;
  return ourTarget({
    id: variantId('ours-redis', variant),
    label: 'ours (Redis)',
    server: 'redis',
    throughputPrefetch: 2,
    throughputClaimsInFlight: 2,
    tuning: 'RedisTaskStore, one ioredis connection per store (+ its subscriber duplicate)',
    defaults: 'RedisTaskStore({ connection, prefix }) on one ioredis connection (+ its subscriber duplicate)',
    removeOnComplete: variant.removeOnComplete,
    async open() {
      admin = new IORedis(url, { maxRetriesPerRequest: null });
    },
    async close() {
      for (const c of connections.splice(0)) c.disconnect();
      admin?.disconnect();
      admin = null;
    },
    async createStore(namespace) {
      const connection = new IORedis(url, { maxRetriesPerRequest: null });
      connections.push(connection);
      return new RedisTaskStore({ connection, prefix: namespace, historyLimit: benchHistoryLimit() });
    },
    async dropNamespace(namespace) {
      for (const c of connections.splice(0)) await c.quit().catch(() => c.disconnect());
      // all keys of the store carry the hash tag {namespace:queue}
      let cursor = '0';
      do {
        const [next, keys] = await admin!.scan(cursor, 'MATCH', `*{${namespace}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await admin!.unlink(...keys);
      } while (cursor !== '0');
    },
  });
}
