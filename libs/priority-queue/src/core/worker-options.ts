import type { TaskEvents } from './events';
import type { TaskTypeRegistry } from './registry';
import type { WorkerObserver } from './task-run';
import type { TaskStore } from './task-store.port';
import { MAX_TIMER_MS, type TimerHost } from './timers';
import { intOption } from './validation';

/** What a Worker (worker.ts) is given, and the checked numbers it runs with. */
export interface WorkerOptions {
  store: TaskStore;
  registry: TaskTypeRegistry;
  events?: TaskEvents;
  /** Lease owner name; default host:pid:random. */
  owner?: string;
  /** Most handler calls (submits + polls) at once. Default 16. */
  concurrency?: number;
  /**
   * Claimed tasks held locally, leased (and renewed) while they wait for a free handler slot, so
   * that the next batch is on hand when handlers finish: fewer, larger claims on stores with
   * costly round trips. Default 0 (off): with prefetch, a task submitted later with a higher
   * priority can start after up to `prefetch` tasks this worker already claimed, and a claimed
   * task waits locally while another worker may have a free slot. At stop(), tasks that did not
   * start are released back to the queue untouched (store.release: no attempt counted, runAt and
   * place in the order kept).
   */
  prefetch?: number;
  /** Most claims per store call. Default = concurrency + prefetch. */
  batchSize?: number;
  /**
   * Claim calls that may be in flight at once (each for slots no other one asked for): with 2,
   * the next claim is on its way while the previous one's answer is still coming, which keeps a
   * store with costly round trips busy. Default 1.
   */
  claimsInFlight?: number;
  /** Lease length; renewed every leaseMs/3 while a handler runs. Default 30 s. */
  leaseMs?: number;
  /**
   * Safety poll while idle: a claim round (polls and submissions) at least this often, in case
   * a wake-up was lost; new work otherwise starts on store.subscribe() wake-ups and on known due
   * times (delayed tasks, rate tokens, polls), not on this poll. Default: the store's advice
   * (store.idlePollMs: 2 min on MySQL / MariaDB and SQLite, whose wake-ups read durable state),
   * else 5 s with subscribe(), 250 ms without. While handlers run, free slots are claimed at
   * least every min(250 ms, idlePollMs).
   */
  idlePollMs?: number;
  /**
   * Period of the recovery sweep (expired leases, passed deadlines). Default 5 s. With
   * store.sweepExpired the workers of a queue share it through a lease of one period: one
   * sweep per period per queue. A lease or deadline that expires is recovered within one
   * period, within two when the worker that swept last died.
   */
  recoverEveryMs?: number;
  /** How long stop() waits for running handlers. Default 10 s. */
  shutdownGraceMs?: number;
  /** Unique name of this worker's timers in the timer host. Default `priority-queue:<owner>`. */
  name?: string;
  timers?: TimerHost;
  random?: () => number;
  /** Called with errors the loop survives (store unreachable, a listener failing...). */
  onError?: (error: unknown) => void;
  /** Told of handler errors and lost leases (for logs). */
  observer?: WorkerObserver;
}

/** Claim rounds while handlers run, at most this far apart (and no further than idlePollMs). */
const BUSY_POLL_MS = 250;
/** Safety poll of an idle worker whose store wakes it (subscribe) and advises nothing else. */
const DEFAULT_IDLE_POLL_MS = 5000;
const DEFAULT_RECOVER_EVERY_MS = 5000;
/** An idle worker re-reads the store clock at most this often (its sweeps need no fresher offset). */
export const CLOCK_RESYNC_MS = 60_000;

/** The numbers of WorkerOptions, checked, with their defaults. */
export interface WorkerSettings {
  concurrency: number;
  prefetch: number;
  claimsInFlight: number;
  batchSize: number;
  minBatch: number;
  leaseMs: number;
  idlePollMs: number;
  /** Claim rounds while runs are active, and the cadence of the poll checks of soft wakes. */
  busyPollMs: number;
  recoverEveryMs: number;
  graceMs: number;
}

export function workerSettings(options: WorkerOptions): WorkerSettings {
  const concurrency = intOption('concurrency', options.concurrency, 16, 1);
  const prefetch = intOption('prefetch', options.prefetch, 0, 0);
  const batchSize = intOption('batchSize', options.batchSize, concurrency + prefetch, 1);
  const store = options.store;
  const idlePollMs = intOption('idlePollMs', options.idlePollMs, store.idlePollMs ?? (store.subscribe ? DEFAULT_IDLE_POLL_MS : BUSY_POLL_MS), 1, MAX_TIMER_MS);
  return {
    concurrency,
    prefetch,
    claimsInFlight: intOption('claimsInFlight', options.claimsInFlight, 1, 1),
    batchSize,
    // while handlers run, a finished handler triggers a claim only once a quarter of batchSize is free
    minBatch: Math.max(1, Math.floor(batchSize / 4)),
    leaseMs: intOption('leaseMs', options.leaseMs, 30_000, 1, MAX_TIMER_MS),
    idlePollMs,
    busyPollMs: Math.min(BUSY_POLL_MS, idlePollMs),
    recoverEveryMs: intOption('recoverEveryMs', options.recoverEveryMs, DEFAULT_RECOVER_EVERY_MS, 1, MAX_TIMER_MS),
    graceMs: intOption('shutdownGraceMs', options.shutdownGraceMs, 10_000, 0, MAX_TIMER_MS),
  };
}
