export * from './core';
export * from './nest';
export { MemoryTaskStore } from './stores/memory';
