/** Injection tokens and metadata keys of the Nest shell. */
export const PRIORITY_TASK_METADATA = 'nestjs-priority-queue:task';
export const PRIORITY_QUEUE_STORE = Symbol('PRIORITY_QUEUE_STORE');
export const PRIORITY_QUEUE_REGISTRY = Symbol('PRIORITY_QUEUE_REGISTRY');
export const PRIORITY_QUEUE_EVENTS = Symbol('PRIORITY_QUEUE_EVENTS');
export const PRIORITY_QUEUE_CORE = Symbol('PRIORITY_QUEUE_CORE');
