export { RedisTaskStore, type RedisTaskStoreOptions } from './redis-task-store';
export { queueKeys, FIXED_KEYS, DYNAMIC_KEYS, type QueueKeys } from './keys';
export {
  redisStore,
  DEFAULT_REDIS_INIT_TIMEOUT_MS,
  type RedisStoreOptions,
  type RedisStoreWithConnection,
  type RedisStoreWithUrl,
  type RedisStoreWithOptions,
  type RedisStoreBackend,
} from './redis-store.factory';
export { RedisEventTransport } from './event-transport';
