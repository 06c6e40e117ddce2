import type { Fairness } from '../core/fairness';
import type { TaskTypeOptions } from '../core/handler';
import type { RemoveOption } from '../core/removal';
import type { StoreBackend } from '../core/store-backend';
import type { TaskStore } from '../core/task-store.port';

/**
 * Which store holds the tasks, as plain configuration (the form of the first releases; the typed
 * factories memoryStore(), redisStore() and typeormStore() are the recommended form). Drivers
 * are loaded only for the store chosen.
 */
export type StoreConfig =
  | { type: 'memory'; agingIntervalMs?: number }
  | {
      type: 'redis';
      /** An ioredis connection the app owns (never closed by the library). */
      connection: unknown;
      prefix?: string;
      /** Name of the default queue inside Redis (default `default`). */
      queue?: string;
      agingIntervalMs?: number;
    }
  | {
      type: 'typeorm';
      /** A TypeORM DataSource the app owns, e.g. injected from @nestjs/typeorm. */
      dataSource: unknown;
      tablePrefix?: string;
      /** Name of the default queue in the tables (default `default`). */
      queue?: string;
      agingIntervalMs?: number;
    };

/**
 * A queue's worker in this process: whether it runs, and the core Worker's settings
 * (core/worker-options.ts WorkerOptions), restated on purpose: `extends Pick<WorkerOptions, ...>`
 * would make the published types name WorkerOptions, which the package root does not export (it
 * carries the store, registry, timers and observer that Nest wires itself), so
 * test/compat/package.spec.ts would list it and its members as unexported public types. The
 * orchestrator (priority-queue.orchestrator.ts) passes each field to the Worker by name, so the
 * compiler checks every restated field against WorkerOptions.
 */
export interface WorkerModuleOptions {
  /** Run handlers in this process (default true). A producer-only API process sets false. */
  enabled?: boolean;
  concurrency?: number;
  /**
   * Claimed tasks held (leased, renewed) while they wait for a free handler slot: higher
   * throughput on SQL/Redis stores, at the cost of strict start order across claims. Default 0.
   */
  prefetch?: number;
  batchSize?: number;
  /**
   * Claim calls in flight at once (default 1). Set 2 together with `prefetch` when a worker on a
   * Redis or SQL store waits for its claims (handlers shorter than a claim's round trip).
   */
  claimsInFlight?: number;
  leaseMs?: number;
  idlePollMs?: number;
  recoverEveryMs?: number;
  shutdownGraceMs?: number;
}

/** Options of one queue (forRoot's default queue, or a registerQueue queue). */
export interface QueueOptions {
  /**
   * This process's worker of the queue. It starts only when the queue has a @PriorityTask handler
   * in this process. Named queues start from forRoot's `workers` and override field by field.
   */
  workers?: WorkerModuleOptions;
  /** Types this process may submit to the queue without running them (producer-only processes). */
  taskTypes?: Array<{ type: string } & TaskTypeOptions>;
  /** DESIGN §2 aging of this queue, fixed for its life (default: the store config's, else off). */
  agingIntervalMs?: number;
  /**
   * DESIGN §7 fair share between the tenants of each priority level ('tenant'), fixed for the
   * queue's life; not together with aging. Weights: AdmissionGuard.setTenantWeight. Default off.
   */
  fairness?: Fairness;
  /** Inherited by named queues from forRoot unless set. */
  maxPayloadBytes?: number;
  /** Terminal tasks older than this are purged (default 7 days; 0 = keep forever). Inherited. */
  retentionMs?: number;
  /** Period of the purge (default 60 s). Inherited. */
  purgeEveryMs?: number;
  /**
   * Delete succeeded tasks: `true` in the step that finishes them, a count to keep the newest n
   * (per task type), or `{ age (seconds), count }`; default keep until retentionMs. A task
   * type's own setting wins (core/removal.ts). Inherited.
   */
  removeOnComplete?: RemoveOption;
  /** The same for FAILED, TIMED_OUT, CANCELED and SUBMIT_UNKNOWN tasks a worker finishes. Inherited. */
  removeOnFail?: RemoveOption;
  /**
   * Cross-process events: publish the transitions this process makes on the store's transport
   * (default true), so that other processes' cluster @OnTaskEvent handlers and waitFor() see
   * them. Inherited.
   */
  events?: { publish?: boolean };
}

/** Severity threshold of the library's log lines (Nest Logger, context `PriorityQueue`). */
export type PriorityQueueLogLevel = 'debug' | 'log' | 'warn' | 'error' | 'off';

export interface PriorityQueueModuleOptions extends QueueOptions {
  /**
   * Where every queue lives. Default: memoryStore(). A backend (memoryStore(), redisStore() from
   * nestjs-priority-queue/redis, typeormStore() from nestjs-priority-queue/typeorm) serves any
   * number of queues; a TaskStore instance serves the default queue only and is never closed.
   */
  store?: StoreConfig | TaskStore | StoreBackend;
  /**
   * Prometheus metrics through prom-client (an optional dependency: npm install prom-client):
   * true for a registry of the library's own (PriorityQueueMetrics.registry), or a registry of
   * yours. Every series has a `queue` label.
   */
  metrics?: boolean | { registry?: unknown; prefix?: string };
  /**
   * What the library logs through Nest's Logger: handler failures, retries, SUBMIT_UNKNOWN, lost
   * leases at `warn` / `error`; worker start and stop at `log`. Default `log`; `off` for none.
   */
  logLevel?: PriorityQueueLogLevel;
}

export interface RegisterQueueOptions extends QueueOptions {
  /** Queue name: 1 to 64 letters, digits, '.', '_' or '-'; `default` is forRoot's queue. */
  name: string;
  /** A TaskStore of this queue's own (never closed by the library) instead of one from forRoot's store. */
  store?: TaskStore;
  /** Make the queue's TaskManager and AdmissionGuard injectable everywhere (default false). */
  isGlobal?: boolean;
}

export interface RegisterQueueAsyncOptions {
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  imports?: any[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  inject?: any[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  useFactory: (...args: any[]) => Omit<RegisterQueueOptions, 'name' | 'isGlobal'> | Promise<Omit<RegisterQueueOptions, 'name' | 'isGlobal'>>;
  isGlobal?: boolean;
}
