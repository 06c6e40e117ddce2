import type { TaskTypeOptions } from '../core/handler';
import type { TaskStore } from '../core/task-store.port';

/** Which store holds the tasks. Drivers are loaded only for the store chosen. */
export type StoreConfig =
  | { type: 'memory'; agingIntervalMs?: number }
  | {
      type: 'redis';
      /** An ioredis connection the app owns (never closed by the library). */
      connection: unknown;
      prefix?: string;
      queue?: string;
      agingIntervalMs?: number;
    }
  | {
      type: 'typeorm';
      /** A TypeORM DataSource the app owns, e.g. injected from @nestjs/typeorm. */
      dataSource: unknown;
      tablePrefix?: string;
      queue?: string;
      agingIntervalMs?: number;
    };

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
  /** Claim calls in flight at once (default 1); 2 keeps a store with costly round trips busy. */
  claimsInFlight?: number;
  leaseMs?: number;
  idlePollMs?: number;
  recoverEveryMs?: number;
  shutdownGraceMs?: number;
}

export interface PriorityQueueModuleOptions {
  /** Default: the in-memory store. A TaskStore instance is used as is (and not closed). */
  store?: StoreConfig | TaskStore;
  workers?: WorkerModuleOptions;
  /** Types this process may submit without running them (producer-only processes). */
  taskTypes?: Array<{ type: string } & TaskTypeOptions>;
  maxPayloadBytes?: number;
  /** Terminal tasks older than this are purged (default 7 days; 0 = keep forever). */
  retentionMs?: number;
  /** Period of the purge (default 60 s). */
  purgeEveryMs?: number;
  /**
   * Prometheus metrics through prom-client (an optional dependency): true for a registry of the
   * library's own (PriorityQueueMetrics.registry), or a registry of yours.
   */
  metrics?: boolean | { registry?: unknown; prefix?: string };
}
