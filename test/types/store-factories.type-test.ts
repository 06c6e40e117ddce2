/**
 * Type-level tests of the public API (compiled, never run): `npm run typecheck` compiles them
 * against the sources, test/e2e/published-types.spec.ts against the built .d.ts in a consumer
 * project with skipLibCheck false. Each `@ts-expect-error` line must be a compile error.
 */
import Redis, { Cluster } from 'ioredis';
import { DataSource } from 'typeorm';
import {
  getAdmissionGuardToken,
  getTaskManagerToken,
  InjectTaskManager,
  memoryStore,
  OnTaskEvent,
  PriorityQueueModule,
  PriorityTask,
  type ClusterTaskEvent,
  type QueueTaskEvent,
  type LaneRefusal,
  type TaskExplanation,
  type TaskHistoryEntry,
  type TaskManager,
  type TaskPage,
  type TaskQuery,
} from 'nestjs-priority-queue';
import { PriorityQueueHealthIndicator } from 'nestjs-priority-queue/health';
import { redisStore } from 'nestjs-priority-queue/redis';
import { typeormStore } from 'nestjs-priority-queue/typeorm';

declare const redis: Redis;
declare const cluster: Cluster;
declare const dataSource: DataSource;

export const ok = [
  redisStore({ connection: redis }),
  redisStore({ connection: cluster, prefix: 'app', initTimeoutMs: 5000 }),
  redisStore({ url: 'redis://localhost:6379' }),
  redisStore({ url: 'redis://localhost:6379', options: { db: 2 } }),
  redisStore({ options: { host: 'localhost', port: 6379 } }),
  redisStore({ connection: cluster, waitForReplicas: { replicas: 1, timeoutMs: 100 } }),
  typeormStore({ dataSource }),
  typeormStore({ dataSource, migrate: false, tablePrefix: 'jobs_' }),
  memoryStore(),
  memoryStore({ historyLimit: 0 }),
  redisStore({ url: 'redis://localhost:6379', historyLimit: 20 }),
  typeormStore({ dataSource, historyLimit: 50 }),
  PriorityQueueModule.forRoot({ store: redisStore({ url: 'redis://x' }), metrics: true, logLevel: 'warn' }),
  PriorityQueueModule.forRoot({ store: typeormStore({ dataSource }) }),
  PriorityQueueModule.forRoot({ store: { type: 'redis', connection: redis } }),
  PriorityQueueModule.registerQueue({ name: 'reports', workers: { concurrency: 2 }, agingIntervalMs: 1000 }),
  getTaskManagerToken('reports'),
  getAdmissionGuardToken(),
];

export const wrong = [
  // @ts-expect-error a URL string is not redisStore's options
  redisStore('redis://localhost:6379'),
  // @ts-expect-error a URL is not a connection
  redisStore({ connection: 'redis://localhost:6379' }),
  // @ts-expect-error a connection and a URL at once
  redisStore({ connection: redis, url: 'redis://localhost:6379' }),
  // @ts-expect-error nothing to connect to
  redisStore({ prefix: 'app' }),
  // @ts-expect-error DataSource options are not a DataSource
  typeormStore({ dataSource: { type: 'postgres', url: 'postgres://x' } }),
  // @ts-expect-error typeormStore takes an object
  typeormStore(dataSource),
  // @ts-expect-error a factory's options are not a store
  PriorityQueueModule.forRoot({ store: { url: 'redis://x' } }),
  // @ts-expect-error historyLimit is a number
  memoryStore({ historyLimit: '20' }),
  // @ts-expect-error a queue needs a name
  PriorityQueueModule.registerQueue({ workers: {} }),
  // @ts-expect-error not a log level
  PriorityQueueModule.forRoot({ logLevel: 'verbose' }),
];

@PriorityTask('pdf', { queue: 'reports', maxAttempts: 3 })
export class PdfHandler {
  run() {
    return 1;
  }
}

export class Listener {
  constructor(@InjectTaskManager('reports') readonly reports: TaskManager) {}

  @OnTaskEvent('succeeded', { queue: 'reports' })
  local(e: QueueTaskEvent) {
    return e.task.id;
  }

  @OnTaskEvent(['failed', 'terminal'], { scope: 'cluster', type: ['pdf'] })
  cluster(e: ClusterTaskEvent) {
    return e.taskId;
  }

  // @ts-expect-error not an event name
  @OnTaskEvent('finished')
  wrongName() {
    return 0;
  }

  async wait(id: string) {
    const t = await this.reports.waitFor<{ doc: string }, { pages: number }>(id, { timeoutMs: 1000 });
    return t.result?.pages;
  }
}

/** What the dashboard shows, in an app's own words: each result has a type it can name. */
export async function inspect(reports: TaskManager, id: string) {
  const query: TaskQuery = { status: 'PENDING_SUBMIT', tenantId: 't1', minPriority: 5, limit: 50 };
  const page: TaskPage = await reports.query(query);
  const next: TaskPage = await reports.query({ ...query, cursor: page.nextCursor });
  const why: TaskExplanation = await reports.explain(id);
  const refusal: LaneRefusal | undefined = why.refusedBy;
  const history: TaskHistoryEntry[] = await reports.history(id);
  const retried = await reports.retry(id);
  return [next.tasks.length, why.verdict, refusal?.limit, history[0]?.to, retried.status];
}

export async function health(h: PriorityQueueHealthIndicator) {
  const r = await h.isHealthy('queues', { maxOldestWaitMs: { reports: 60_000 } });
  return r.queues.status;
}
