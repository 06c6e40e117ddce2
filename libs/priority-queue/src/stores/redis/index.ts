export { RedisTaskStore, type RedisTaskStoreOptions } from './redis-task-store';
export { queueKeys, FIXED_KEYS, DYNAMIC_KEYS, type QueueKeys } from './keys';
