/**
 * `nestjs-priority-queue/redis`: the Redis store (needs the `ioredis` peer dependency). The
 * library root never imports ioredis; import this entry point only when you use Redis.
 */
export {
  redisStore,
  type RedisStoreOptions,
  type RedisStoreWithConnection,
  type RedisStoreWithUrl,
  type RedisStoreWithOptions,
  type RedisStoreBackend,
  type RedisStoreCommon,
} from './stores/redis/redis-store.factory';
export type { RedisConnection } from './stores/redis/connection-check';
export type { ReplicaWait } from './stores/redis/scripts';
export { RedisTaskStore, type RedisTaskStoreOptions } from './stores/redis/redis-task-store';
