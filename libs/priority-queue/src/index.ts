/**
 * The public API of `nestjs-priority-queue` (the package root). Only what an application needs:
 * the Nest module, decorators and injectables, the task and handler types, the errors, the
 * memory store and the TaskStore port (for a store of your own). Everything else (order keys,
 * GCRA, lane keys, validation helpers, the core queue and worker) is internal: tests reach it
 * through the `@pq/internal` alias (test/support/internal.ts), never through this file.
 *
 * The Redis and TypeORM stores are separate entry points (`nestjs-priority-queue/redis`,
 * `nestjs-priority-queue/typeorm`), so this one never loads a database driver.
 * Adding an export: add it here, to the list in test/e2e/entry-points.spec.ts and to the
 * package README (libs/priority-queue/README.md); test/package checks the README names it.
 */

// Nest: module, decorators, injectables
export { PriorityQueueModule } from './nest/priority-queue.module';
export type { PriorityQueueModuleOptions, StoreConfig, WorkerModuleOptions } from './nest/priority-queue.options';
export { PriorityTask } from './nest/priority-task.decorator';
export { TaskManager, type TaskListQuery } from './nest/task-manager.service';
export { AdmissionGuard } from './nest/admission-guard.service';
export { InjectTaskStore } from './nest/inject-task-store.decorator';
export { PRIORITY_QUEUE_STORE } from './nest/priority-queue.constants';
export { PriorityQueueMetrics, type MetricsRegistry } from './nest/priority-queue.metrics';

// Tasks, handlers, events
export { TaskStatus, TERMINAL_STATUSES, IN_FLIGHT_STATUSES, ALL_STATUSES, isTerminal, isInFlight } from './core/task';
export type { Task, TerminalStatus, JsonValue } from './core/task';
export type { SubmitInput } from './core/validation';
export type { TaskTypeOptions, TaskHandler, HandlerContext, PollContext, PollResult } from './core/handler';
export type { TaskEvent, TaskEventListener } from './core/events';
export type { QueueStats, PendingPriorityStats } from './core/task-store.port';
export type { LimitsSnapshot, LimitUpdate, ProviderLimits } from './core/admission';

// Errors
export {
  PriorityQueueError,
  ValidationError,
  UnknownTaskTypeError,
  IdempotencyConflictError,
  TaskNotFoundError,
  InvalidStateError,
  StaleLeaseError,
  DeadlinePassedError,
  HandlerRegistrationError,
  StoreClosedError,
  NotSubmittedError,
  PermanentError,
} from './core/errors';

// Stores: the embedded one, and the port a store of your own implements
export { MemoryTaskStore } from './stores/memory';
export type {
  TaskStore,
  StoreOptions,
  Clock,
  CreateResult,
  ListQuery,
  ClaimRequest,
  SubmissionClaim,
  SubmittedOutcome,
  PollOutcome,
  CompletionOutcome,
  RetryOutcome,
} from './core/task-store.port';
export type { NewTask, Fence } from './core/task';
