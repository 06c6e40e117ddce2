/**
 * A worker process of the Redis multi-process tests: core Worker + RedisTaskStore against the
 * server given in PQ_WORKER (JSON of WorkerProcessConfig). Appends one audit line per event to
 * its own file, with STORE times:
 *   S <id> <claimedAt>            claimed (claimedAt = leaseUntil - leaseMs of the claim)
 *   F <id> <finishedAt> <status>  terminal
 *   X <id> <from> <to>            other transitions it made (recovery)
 *   H <id> <start> <end>          a handler run (auditHandlers; LOCAL times, one clock per machine)
 * Talks to the parent over IPC: sends {kind:'ready'} and {kind:'started', id}; stops on {kind:'stop'}.
 */
import { appendFileSync } from 'node:fs';
import Redis, { Cluster } from 'ioredis';
import { TaskEvents, TaskStatus, TaskTypeRegistry, Worker, isTerminal } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { CLUSTER_CLIENT_OPTIONS } from './cluster-client';

export interface WorkerProcessConfig {
  /** A single redis-server (or give `cluster`). */
  url?: string;
  /** Startup nodes of a Redis Cluster, reached through an ioredis Cluster client (instead of url). */
  cluster?: Array<{ host: string; port: number }>;
  prefix: string;
  /** Queues served, one Worker and store each (default: the store's default queue). */
  queues?: string[];
  /** RedisTaskStore option of the same name (failover test). */
  waitForReplicas?: { replicas: number; timeoutMs: number };
  /** RedisTaskStore option of the same name (fair-share audit). */
  fairness?: 'tenant';
  /** Append an H line per handler run. */
  auditHandlers?: boolean;
  auditPath: string;
  leaseMs: number;
  concurrency: number;
  /** How long each handler runs (0 = returns at once). */
  handlerMs: number;
  /** Tell the parent about every handler start (crash test). */
  reportStarts?: boolean;
}

const cfg = JSON.parse(process.env.PQ_WORKER ?? '{}') as WorkerProcessConfig;
const connection = cfg.cluster ? new Cluster(cfg.cluster, CLUSTER_CLIENT_OPTIONS) : new Redis(cfg.url!, { maxRetriesPerRequest: null });
connection.on('error', () => undefined); // reconnects by itself (restart and failover tests)
const stores = (cfg.queues ?? [undefined]).map(
  (queue) => new RedisTaskStore({ connection, prefix: cfg.prefix, queue, waitForReplicas: cfg.waitForReplicas, fairness: cfg.fairness }),
);
const registry = new TaskTypeRegistry();
const events = new TaskEvents();
const send = (m: object) => process.send?.(m);

registry.register('noop', { idempotent: true, maxAttempts: 100 }, {
  async run({ task }) {
    if (cfg.reportStarts) send({ kind: 'started', id: task.id });
    const start = Date.now();
    if (cfg.handlerMs > 0) await new Promise((r) => setTimeout(r, cfg.handlerMs));
    if (cfg.auditHandlers) audit(`H ${task.id} ${start} ${Date.now()}`);
    return null;
  },
});

const lines: string[] = [];
let flushTimer: NodeJS.Timeout | null = null;
function audit(line: string): void {
  lines.push(line);
  flushTimer ??= setTimeout(flush, 20);
}
function flush(): void {
  flushTimer = null;
  if (lines.length) appendFileSync(cfg.auditPath, lines.splice(0).join('\n') + '\n');
}

events.on((e) => {
  if (e.to === TaskStatus.SUBMITTING && e.from === TaskStatus.PENDING_SUBMIT) {
    audit(`S ${e.taskId} ${(e.task.leaseUntil ?? 0) - cfg.leaseMs}`);
  } else if (isTerminal(e.to) && e.from !== TaskStatus.PENDING_SUBMIT) {
    audit(`F ${e.taskId} ${e.task.finishedAt} ${e.to}`);
  } else {
    audit(`X ${e.taskId} ${e.from} ${e.to}`);
  }
});

const workers = stores.map(
  (store) =>
    new Worker({
      store,
      registry,
      events,
      concurrency: cfg.concurrency,
      leaseMs: cfg.leaseMs,
      idlePollMs: 100,
      recoverEveryMs: 250,
      shutdownGraceMs: 5000,
      onError: (e) => process.stderr.write(`worker ${process.pid}: ${e instanceof Error ? e.message : String(e)}\n`),
    }),
);

async function main(): Promise<void> {
  for (const store of stores) await store.init();
  for (const worker of workers) await worker.start();
  send({ kind: 'ready' });
}

process.on('message', async (m: { kind?: string }) => {
  if (m?.kind !== 'stop') return;
  await Promise.all(workers.map((w) => w.stop()));
  flush();
  await Promise.all(stores.map((s) => s.close()));
  await connection.quit().catch(() => connection.disconnect());
  send({ kind: 'stopped' });
  process.exit(0);
});

main().catch((e) => {
  process.stderr.write(`worker ${process.pid} failed to start: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
