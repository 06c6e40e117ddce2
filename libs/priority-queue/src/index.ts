export * from './core';
export * from './nest';
export { MemoryTaskStore, memoryStore, type MemoryStoreOptions } from './stores/memory';
