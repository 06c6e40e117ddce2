import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import type { TaskStore } from '../../../libs/priority-queue/src/core/task-store.port';
import type { SubmitInput } from '../../../libs/priority-queue/src/core/validation';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import type { AdmissionLimits, BenchJob, BenchTarget, Profile, RunningWorker, ServerKind, WorkerSpec } from '../target';
import { ourVersion } from '../lib/machine';
import { explainUnsupported, removeOnCompleteSetting, type RemoveOnComplete } from './remove-on-complete';

/** How one of our stores is created and cleaned up; the rest is the same for every store. */
export interface OurStoreBinding {
  id: string;
  label: string;
  server: ServerKind;
  tuning: string;
  /** What the store's `defaults` profile sets (default: the same store options as tuned). */
  defaults?: string;
  /** Shared resources (connections, DataSource). */
  open(attach: boolean): Promise<void>;
  close(): Promise<void>;
  /** A store of one namespace; the caller runs init(). */
  createStore(namespace: string, profile: Profile): Promise<TaskStore>;
  /** Called after the store of the namespace was closed. */
  dropNamespace(namespace: string): Promise<void>;
  /**
   * Worker prefetch in throughput scenarios, as a multiple of the concurrency (0 = none). Off in
   * order and latency scenarios, like the peers' local queues.
   */
  throughputPrefetch?: number;
  /** Worker claimsInFlight in throughput scenarios (default 1). */
  throughputClaimsInFlight?: number;
  /** SQL: writes `count` SUCCEEDED rows into the namespace's task table. */
  seedTerminal?(store: TaskStore, namespace: string, count: number): Promise<void>;
  /**
   * The `+roc` variant: finished tasks removed as BullMQ's removeOnComplete does (see
   * remove-on-complete.ts). Undefined: the library's default retention.
   */
  removeOnComplete?: RemoveOnComplete;
}

export const TASK_TYPE = 'bench';

/** A variant of one of our targets: today only the removeOnComplete hook (`<id>+roc`). */
export interface OurVariant {
  removeOnComplete?: RemoveOnComplete;
}

export function variantId(id: string, variant: OurVariant): string {
  return variant.removeOnComplete === undefined ? id : `${id}+roc`;
}

let reportedErrors = 0;
/** Prints the first few errors the worker loop survived (a healthy run prints none). */
function reportWorkerError(error: unknown): void {
  if (reportedErrors++ < 3) console.error(`  worker error: ${(error as Error)?.message ?? String(error)}`);
}
export const LEASE_MS = 30_000;

/**
 * Our library driven the way an application drives it: PriorityQueue.submit / submitMany for
 * producers, core Worker (claim batch = concurrency) for consumers, so the figures include
 * validation and the real worker loop, not just the store.
 */
export function ourTarget(binding: OurStoreBinding): BenchTarget {
  let store: TaskStore | null = null;
  let queue: PriorityQueue | null = null;
  let namespace = '';
  let profile: Profile = 'tuned';
  let handler: WorkerSpec['handler'] = () => undefined;
  const registry = new TaskTypeRegistry();
  try {
    registry.register(
      TASK_TYPE,
      removeOnCompleteSetting(binding.removeOnComplete),
      {
        run: async ({ task, payload }) => {
          const p = payload as { i: number; p: number };
          await handler({ i: p.i, priority: p.p, claimedAt: (task.leaseUntil ?? 0) - LEASE_MS });
          return null;
        },
      },
      'bench',
    );
  } catch (e) {
    throw explainUnsupported(binding.removeOnComplete, e);
  }

  const toInput = (j: BenchJob): SubmitInput => ({
    type: TASK_TYPE,
    payload: { i: j.i, p: j.priority },
    priority: j.priority,
    ...(j.providerKey ? { providerKey: j.providerKey } : {}),
    ...(j.accountId ? { accountId: j.accountId } : {}),
    ...(j.tenantId ? { tenantId: j.tenantId } : {}),
  });

  const roc = binding.removeOnComplete === undefined ? '' : `; removeOnComplete ${JSON.stringify(binding.removeOnComplete)}`;
  return {
    id: binding.id,
    label: binding.label,
    server: binding.server,
    ours: true,
    ...(binding.removeOnComplete === undefined ? {} : { variant: '+roc' }),
    version: ourVersion(),
    defaults: `core Worker with only concurrency set (prefetch 0, claimsInFlight 1, batchSize, leaseMs, idlePollMs (5 s with wake-ups, MySQL / SQLite 2 min) and recoverEveryMs 5 s at their defaults); ${binding.defaults ?? binding.tuning}${roc}`,
    tuning: `core Worker, ${
      binding.throughputPrefetch
        ? `in throughput scenarios prefetch ${binding.throughputPrefetch} x concurrency and ${binding.throughputClaimsInFlight ?? 1} claim(s) in flight (order and latency: none, 1), batchSize = concurrency + prefetch`
        : 'batchSize = concurrency'
    }, leaseMs ${LEASE_MS}; ${binding.tuning}${roc}`,
    leaseMs: LEASE_MS,
    open: (opts) => binding.open(!!opts?.attach),
    close: () => binding.close(),
    async begin(ns, opts) {
      namespace = ns;
      profile = opts?.profile ?? 'tuned';
      store = await binding.createStore(ns, profile);
      await store.init();
      queue = new PriorityQueue({ store, registry });
    },
    async end(opts) {
      await store?.close();
      store = null;
      queue = null;
      if (!opts?.detach) await binding.dropNamespace(namespace);
    },
    async submitOne(job) {
      await queue!.submit(toInput(job));
    },
    async submitBulk(jobs) {
      await queue!.submitMany(jobs.map(toInput));
    },
    async startWorker(spec: WorkerSpec): Promise<RunningWorker> {
      handler = spec.handler;
      const throughput = spec.purpose === 'throughput';
      const prefetch = throughput ? Math.round((binding.throughputPrefetch ?? 0) * spec.concurrency) : 0;
      const claimsInFlight = throughput ? (binding.throughputClaimsInFlight ?? 1) : 1;
      const worker = new Worker(
        profile === 'defaults'
          ? { store: store!, registry, concurrency: spec.concurrency, onError: reportWorkerError }
          : {
              store: store!,
              registry,
              concurrency: spec.concurrency,
              prefetch,
              batchSize: spec.concurrency + prefetch,
              claimsInFlight,
              leaseMs: LEASE_MS,
              onError: reportWorkerError,
            },
      );
      await worker.start();
      return {
        stop: async () => {
          await worker.stop();
          handler = () => undefined;
        },
      };
    },
    async applyLimits(limits: AdmissionLimits) {
      for (const p of limits.providers) {
        await store!.setLimits({
          kind: 'provider',
          providerKey: p.providerKey,
          qps: p.qps,
          burst: p.burst,
          accountConcurrency: p.accountConcurrency,
        });
      }
      await store!.setLimits({ kind: 'defaultTenant', quota: limits.defaultTenantQuota });
    },
    ...(binding.seedTerminal
      ? { seedTerminal: (count: number) => binding.seedTerminal!(store!, namespace, count) }
      : {}),
  };
}

/** `PQ_BENCH_HISTORY_LIMIT=n npm run bench ...`: the stores' historyLimit (default: the store's own). */
export function benchHistoryLimit(): number | undefined {
  const v = process.env.PQ_BENCH_HISTORY_LIMIT;
  return v === undefined || v === '' ? undefined : Number(v);
}
