/**
 * A worker process of the chaos tests (test/chaos): a core Worker on a Redis, Redis Cluster,
 * PostgreSQL, MariaDB or SQLite (a file shared by the processes) store, config in env PQ_CHAOS (JSON of ChaosChildConfig). Its handlers
 * append their own audit lines SYNCHRONOUSLY (a SIGKILL loses none) to auditPath:
 *   B <id> <kind> <t>   a handler call begins (kind: s = run / submit, p = poll)
 *   E <id> <kind> <t>   it returns (or throws)
 *   K <t>               this process kills itself (see selfKill)
 *   C <t>               the worker sends a completeAndClaim (its completes with its claim)
 *   L <t> <ms>          this process's event loop did not run for <ms> (> 500) until t: a stall
 *                       (CPU starved, paused) past which a lease may have run out unrenewed
 *   O <ms>              once: performance.timeOrigin + performance.now() minus this audit's clock
 *   T <a> <s> <b>       the store's clock read s (store.now(), whole ms) between local a and b: the
 *                       audit's clock against the store's, every second
 * with t = wall-clock ms (sub-ms, test/support/wall-clock.ts), comparable across processes of one machine.
 *
 * selfKill: with this probability per store call of the worker (claims, outcome writes,
 * renewals), the process sends the call and SIGKILLs itself 0-2 ms later: a crash mid-claim
 * and mid-outcome-write, whose command may or may not have reached the server.
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Redis, { Cluster } from 'ioredis';
import { DataSource } from 'typeorm';
import { TaskTypeRegistry, Worker, type PollResult, type TaskStore } from '../../libs/priority-queue/src/core';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { wallNow } from '../support/wall-clock';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';

export type ChaosStoreKind = 'redis' | 'redis-cluster' | 'postgres' | 'mariadb' | 'sqlite';

export interface ChaosChildConfig {
  kind: ChaosStoreKind;
  /** redis: URL; redis-cluster: startup nodes; SQL: DataSource options. */
  url?: string;
  nodes?: Array<{ host: string; port: number }>;
  dataSource?: Record<string, unknown>;
  prefix?: string;
  queue: string;
  auditPath: string;
  leaseMs: number;
  concurrency: number;
  selfKill: number;
  /** Transitions kept per task (every store of the run the same): the test checks them. */
  historyLimit: number;
}

/** Payload of every chaos task: how long its handler calls take, how many polls until done. */
export interface ChaosPayload {
  ms: number;
  polls: number;
}

const cfg = JSON.parse(process.env.PQ_CHAOS ?? '{}') as ChaosChildConfig;
const now = () => wallNow().toFixed(3);
const audit = (line: string) => appendFileSync(cfg.auditPath, `${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const WORKER_CALLS = new Set(['claimSubmissions', 'completeAndClaim', 'claimPolls', 'complete', 'markSubmitted', 'recordPoll', 'retry', 'renewLease', 'release']);

/** The store, with a chance of dying right after each worker call was sent; audits completeAndClaim calls. */
function mortal(store: TaskStore): TaskStore {
  return new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const f = (v as (...a: unknown[]) => unknown).bind(target);
      if (!WORKER_CALLS.has(String(prop))) return f;
      return (...args: unknown[]) => {
        if (prop === 'completeAndClaim') audit(`C ${now()}`);
        const out = f(...args);
        if (Math.random() < cfg.selfKill) {
          setTimeout(() => {
            audit(`K ${now()}`);
            process.kill(process.pid, 'SIGKILL');
          }, Math.floor(Math.random() * 3));
        }
        return out;
      };
    },
  });
}

async function openStore(): Promise<{ store: TaskStore; close: () => Promise<void> }> {
  switch (cfg.kind) {
    case 'redis':
    case 'redis-cluster': {
      const connection = cfg.kind === 'redis'
        ? new Redis(cfg.url!, { maxRetriesPerRequest: null })
        : new Cluster(cfg.nodes!, { retryDelayOnFailover: 200, retryDelayOnClusterDown: 200, retryDelayOnTryAgain: 200, maxRedirections: 100, redisOptions: { maxRetriesPerRequest: null } });
      connection.on('error', () => undefined);
      const store = new RedisTaskStore({ connection, prefix: cfg.prefix, queue: cfg.queue, historyLimit: cfg.historyLimit });
      return { store, close: async () => void connection.disconnect() };
    }
    case 'postgres':
    case 'mariadb':
    case 'sqlite': {
      const dataSource = new DataSource(cfg.dataSource as never);
      await dataSource.initialize();
      const store = new TypeOrmTaskStore({ dataSource, tablePrefix: 'ch_', queue: cfg.queue, historyLimit: cfg.historyLimit });
      return { store, close: () => dataSource.destroy() };
    }
  }
}

async function main(): Promise<void> {
  const { store, close } = await openStore();
  await store.init();
  const registry = new TaskTypeRegistry();
  const call = async <T>(id: string, kind: 's' | 'p', ms: number, f: () => T): Promise<T> => {
    audit(`B ${id} ${kind} ${now()}`);
    try {
      if (ms > 0) await sleep(ms);
      return f();
    } finally {
      audit(`E ${id} ${kind} ${now()}`);
    }
  };
  const run = ({ task }: { task: { id: string; payload: unknown } }) => call(task.id, 's', (task.payload as ChaosPayload).ms, () => ({ ok: 1 }));
  registry.register('idem', { maxAttempts: 1000, backoff: { baseMs: 1, maxMs: 20 } }, { run }, 'Idem');
  registry.register('once', { idempotent: false, maxAttempts: 1000 }, { run }, 'Once');
  registry.register(
    'prov',
    { maxAttempts: 1000, backoff: { baseMs: 1, maxMs: 20 }, pollIntervalMs: 20, maxPollIntervalMs: 100 },
    {
      submit: ({ task }) => call(task.id, 's', (task.payload as ChaosPayload).ms, () => `x-${task.id}`),
      poll: ({ task }) => call(task.id, 'p', (task.payload as ChaosPayload).ms, (): PollResult => (Math.random() < 1 / (task.payload as ChaosPayload).polls ? { done: true } : { done: false, nextPollMs: 20 })),
    },
    'Prov',
  );
  let errors = 0;
  const worker = new Worker({
    store: mortal(store),
    registry,
    owner: `chaos:${process.pid}`,
    concurrency: cfg.concurrency,
    leaseMs: cfg.leaseMs,
    idlePollMs: 50,
    recoverEveryMs: 200,
    shutdownGraceMs: 5000,
    onError: () => void errors++,
  });
  await worker.start();
  audit(`O ${(performance.timeOrigin + performance.now() - wallNow()).toFixed(3)}`);
  let tick = performance.now();
  setInterval(() => {
    const t = performance.now();
    if (t - tick > 600) audit(`L ${now()} ${Math.round(t - tick - 100)}`);
    tick = t;
  }, 100).unref();
  setInterval(() => {
    const a = now();
    store.now().then((t) => audit(`T ${a} ${t} ${now()}`), () => undefined);
  }, 1000).unref();
  process.send?.({ kind: 'ready' });
  process.on('message', (m: { kind?: string }) => {
    if (m?.kind !== 'stop') return;
    void (async () => {
      await worker.stop();
      await store.close();
      await close();
      process.send?.({ kind: 'stopped', errors });
      process.exit(0);
    })();
  });
}

main().catch((e) => {
  process.stderr.write(`chaos child ${process.pid} failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
