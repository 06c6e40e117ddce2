import type { MemoryTaskStore } from 'nestjs-priority-queue';
import type { PriorityQueue, SubmitInput, TaskTypeRegistry } from '../../../libs/priority-queue/src/core';
import { seededRandom } from './rng';

/** Accounts of the one provider the memory bench's tasks spread over. */
export const MEMORY_BENCH_ACCOUNTS = 1_000;

/** The classes the setup builds, from the tree under test (profiles load another checkout's). */
export interface MemoryBenchLib {
  MemoryTaskStore: new () => MemoryTaskStore;
  TaskTypeRegistry: new () => TaskTypeRegistry;
  PriorityQueue: new (o: { store: MemoryTaskStore; registry: TaskTypeRegistry }) => PriorityQueue;
}

export interface MemoryBenchSetup {
  store: MemoryTaskStore;
  queue: PriorityQueue;
  /** The next submit of the bench's seeded stream. */
  input: () => SubmitInput;
}

/**
 * npm run bench:memory's world (memory.bench.ts), shared with its profiles: a fresh store, a
 * queue over it, one task type on a provider with an account concurrency limit (admission is
 * checked on every claim), and submits over random priorities (-1000..1000) and accounts from
 * `seed`.
 */
export async function memoryBenchSetup(lib: MemoryBenchLib, seed: number): Promise<MemoryBenchSetup> {
  const store = new lib.MemoryTaskStore();
  await store.init();
  const registry = new lib.TaskTypeRegistry();
  registry.register('bench', { providerKey: 'provider' });
  const queue = new lib.PriorityQueue({ store, registry });
  await store.setLimits({ kind: 'provider', providerKey: 'provider', accountConcurrency: 50 });
  const random = seededRandom(seed);
  let n = 0;
  const input = (): SubmitInput => ({
    type: 'bench',
    priority: Math.floor(random() * 2001) - 1000,
    accountId: `acc-${Math.floor(random() * MEMORY_BENCH_ACCOUNTS)}`,
    payload: { n: ++n, url: 'https://example.test/job' },
  });
  return { store, queue, input };
}
