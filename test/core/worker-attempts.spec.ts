/**
 * DESIGN §4: `attempts` counts every failed submit attempt, the last one too, through a worker
 * (memory, Redis, PostgreSQL, SQLite; MariaDB's complete batch is in the contract cases):
 * the handler of a task with maxAttempts 3 that always fails runs 3 times and the task ends
 * FAILED with attempts 3; an unknown outcome (non-idempotent) and a PermanentError are failed
 * attempts too (an expired submit lease: the contract's attempts cases).
 */
import {
  NotSubmittedError,
  PermanentError,
  PriorityQueue,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type TaskHandler,
  type TaskStore,
  type TaskTypeOptions,
} from '../../libs/priority-queue/src/core';
import { RealStores, type StoreKind } from './support/real-stores';
import { ended } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

/** Runs one task of `handler` on a started worker until it is terminal. */
async function runToEnd(store: TaskStore, handler: TaskHandler, options: TaskTypeOptions, leaseMs = 5000) {
  const registry = new TaskTypeRegistry();
  registry.register('job', { backoff: { baseMs: 1, maxMs: 2 }, ...options }, handler, 'TestHandler');
  const events = new TaskEvents();
  const errors: unknown[] = [];
  const queue = new PriorityQueue({ store, registry, events });
  const worker = new Worker({ store, registry, events, leaseMs, recoverEveryMs: 50, idlePollMs: 20, onError: (e) => errors.push(e) });
  const t = await queue.submit({ type: 'job' });
  const end$ = ended(events, t.id);
  await worker.start();
  const end = await end$;
  await worker.stop();
  expect(errors).toEqual([]);
  return { end, task: (await store.get(t.id))! };
}

describe.each(['memory', 'redis', 'postgres', 'sqlite'] as StoreKind[])('Worker attempts on %s', (kind) => {
  it('maxAttempts 3 and a handler that always fails: 3 runs, FAILED with attempts 3', async () => {
    const { store } = await stores.open(kind);
    let runs = 0;
    const { end, task } = await runToEnd(store, { run: () => { throw new Error(`boom ${++runs}`); } }, { maxAttempts: 3 });
    expect({ runs, to: end.to, attempts: task.attempts, error: task.error }).toEqual({ runs: 3, to: TaskStatus.FAILED, attempts: 3, error: 'boom 3' });
  });

  it('a non-idempotent submit: a NotSubmittedError retry then an unknown outcome count 2 attempts; a PermanentError counts 1', async () => {
    const { store } = await stores.open(kind);
    let runs = 0;
    const unknown = await runToEnd(
      store,
      { run: () => { throw ++runs === 1 ? new NotSubmittedError('429', 1) : new Error('socket hang up'); } },
      { idempotent: false },
    );
    expect({ to: unknown.end.to, attempts: unknown.task.attempts }).toEqual({ to: TaskStatus.SUBMIT_UNKNOWN, attempts: 2 });
    const permanent = await runToEnd(store, { run: () => { throw new PermanentError('bad document'); } }, { maxAttempts: 5 });
    expect({ to: permanent.end.to, attempts: permanent.task.attempts }).toEqual({ to: TaskStatus.FAILED, attempts: 1 });
  });
});
