/** Injection tokens and metadata keys of the Nest shell. */
export const PRIORITY_TASK_METADATA = 'nestjs-priority-queue:task';
export const ON_TASK_EVENT_METADATA = 'nestjs-priority-queue:on-task-event';
/** The default queue's TaskStore (also `getTaskStoreToken()`). */
export const PRIORITY_QUEUE_STORE = Symbol('PRIORITY_QUEUE_STORE');
/** The default queue's task type registry. */
export const PRIORITY_QUEUE_REGISTRY = Symbol('PRIORITY_QUEUE_REGISTRY');
/** The default queue's TaskEvents (transitions made by this process). */
export const PRIORITY_QUEUE_EVENTS = Symbol('PRIORITY_QUEUE_EVENTS');
/** The default queue's core PriorityQueue. */
export const PRIORITY_QUEUE_CORE = Symbol('PRIORITY_QUEUE_CORE');
/** The StoreBackend of forRoot (every queue's stores come from it). */
export const PRIORITY_QUEUE_BACKEND = Symbol('PRIORITY_QUEUE_BACKEND');
/** Name of forRoot's queue. */
export const DEFAULT_QUEUE_NAME = 'default';
