/**
 * The public API of `nestjs-priority-queue` (the package root). Only what an application needs:
 * the Nest module, decorators and injectables, the task and handler types, the errors, the
 * memory store and the TaskStore port (for a store of your own). Everything else (order keys,
 * GCRA, lane keys, validation helpers, the core queue and worker, event transports) is internal:
 * tests reach it by relative path or through the workspace alias of its folder
 * (`nestjs-priority-queue/core`, mapped by jest.config.js and tsconfig.json; the package does not
 * export it), never through this file.
 *
 * The Redis and TypeORM stores are separate entry points (`nestjs-priority-queue/redis`,
 * `nestjs-priority-queue/typeorm`), so this one never loads a database driver.
 * Adding an export: add it here, to the list in test/e2e/entry-points.spec.ts and to the
 * package README (libs/priority-queue/README.md); test/compat/package.spec.ts checks the README
 * names it.
 */

// Nest: module, queues, decorators, injectables
export { PriorityQueueModule } from './nest/priority-queue.module';
export type {
  PriorityQueueModuleOptions,
  StoreConfig,
  WorkerModuleOptions,
  QueueOptions,
  RegisterQueueOptions,
  RegisterQueueAsyncOptions,
  PriorityQueueLogLevel,
} from './nest/priority-queue.options';
export { PriorityTask, type PriorityTaskOptions } from './nest/priority-task.decorator';
export { TaskManager, type TaskListQuery } from './nest/task-manager.service';
export { AdmissionGuard } from './nest/admission-guard.service';
export { InjectTaskManager, InjectAdmissionGuard, InjectTaskStore } from './nest/inject-queue.decorators';
export { getTaskManagerToken, getAdmissionGuardToken, getTaskStoreToken } from './nest/queue-tokens';
export { PRIORITY_QUEUE_STORE, DEFAULT_QUEUE_NAME } from './nest/priority-queue.constants';
export { PriorityQueueRegistry } from './nest/priority-queue.registry';
export { OnTaskEvent, type OnTaskEventOptions, type QueueTaskEvent, type ClusterTaskEvent } from './nest/on-task-event.decorator';
export { PriorityQueueExceptionFilter } from './nest/priority-queue-exception.filter';
export { PriorityQueueMetrics, type MetricsRegistry } from './nest/priority-queue.metrics';

// Tasks, handlers, events
export { TaskStatus, TERMINAL_STATUSES, IN_FLIGHT_STATUSES, ALL_STATUSES, isTerminal, isInFlight } from './core/task';
export type { Task, TerminalStatus, JsonValue } from './core/task';
export type { SubmitInput } from './core/validation';
export type { TaskTypeOptions, TaskHandler, HandlerContext, PollContext, PollResult } from './core/handler';
export type { BoostOptions } from './core/boost';
export type { RemoveOption, RemovalOptions, RemovalRule } from './core/removal';
export type { Fairness } from './core/fairness';
export type { TaskEvent, TaskEventListener } from './core/events';
export type { TaskEventName } from './core/event-names';
export type { TransitionMessage } from './core/event-transport.port';
export type { WaitForOptions } from './core/wait-for';
export type { TaskQuery, TaskPage } from './core/task-query';
export type { TaskExplanation, LaneRefusal } from './core/explain';
export type { TaskHistoryEntry } from './core/history';
export type { QueueStats, PendingPriorityStats } from './core/task-store.port';
export type { LimitsSnapshot, LimitUpdate, ProviderLimits, RefusalReason } from './core/admission';

// Errors
export {
  PriorityQueueError,
  ValidationError,
  UnknownTaskTypeError,
  IdempotencyConflictError,
  TaskNotFoundError,
  InvalidStateError,
  StaleLeaseError,
  LeaseExpiredError,
  DeadlinePassedError,
  HandlerRegistrationError,
  StoreClosedError,
  NotSubmittedError,
  PermanentError,
  WrongQueueError,
  QueueNotFoundError,
  WaitTimeoutError,
  StoreUnavailableError,
  ConfigurationError,
  NotSupportedByStoreError,
  FairTagOverflowError,
} from './core/errors';
export type { IdempotencyField } from './core/idempotency';

// Stores: the embedded one (its factory and its class), the backend type the factories return,
// and the port a store of your own implements
export { MemoryTaskStore, memoryStore, type MemoryStoreOptions } from './stores/memory';
export type { StoreBackend } from './core/store-backend';
export type {
  TaskStore,
  StoreOptions,
  Clock,
  CreateResult,
  ListQuery,
  ClaimRequest,
  SubmissionClaim,
  CompleteCall,
  CompleteAnswer,
  CompleteAndClaimResult,
  SubmittedOutcome,
  PollOutcome,
  CompletionOutcome,
  RetryOutcome,
  SweepRequest,
  StorePolicies,
  BoostedTask,
  WakeReason,
} from './core/task-store.port';
export type { NewTask, Fence, Transition } from './core/task';
