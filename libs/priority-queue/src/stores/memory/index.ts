export { MemoryTaskStore } from './memory-task-store';
