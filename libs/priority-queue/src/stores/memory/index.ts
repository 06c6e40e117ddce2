export { MemoryTaskStore } from './memory-task-store';
export { memoryStore, type MemoryStoreOptions } from './memory-store.factory';
