/**
 * `nestjs-priority-queue/redis`: the Redis store (needs the `ioredis` peer dependency). The
 * library root never imports ioredis; import this entry point only when you use Redis.
 */
export { RedisTaskStore, type RedisTaskStoreOptions } from './stores/redis/redis-task-store';
