/**
 * DESIGN §4 (leases) when the worker's wall clock is stepped back (an NTP correction, a VM
 * resumed from a snapshot, an operator): the store's clock (Redis TIME, the database's now())
 * goes on, so the task's lease ends when it ends. A worker that kept its lease by Date.now()
 * would think the lease younger than it is, stop renewing it, and its handler would run on past
 * the lease's end, beside the worker the recovery then gives the task to (twice at once, the
 * concurrency key's slot held twice). The worker keeps its leases by a clock that only goes
 * forward: it renews on time and the task runs once, on it.
 *
 * Only stores with a clock of their own (the memory store and SQLite read this process's clock,
 * which would step with it).
 */
import { PriorityQueue, TaskEvents, TaskStatus, TaskTypeRegistry, Worker } from '../../libs/priority-queue/src/core';
import { RealStores, type StoreKind } from './support/real-stores';
import { ended, sleep } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

const LEASE_MS = 1500;
const STEP_MS = 60_000;

describe.each(['redis', 'postgres', 'mariadb'] as const satisfies readonly StoreKind[])('Worker on %s whose wall clock is stepped back while a handler runs', (kind) => {
  it('renews the lease on time: the task runs once, on that worker, and another worker never starts it', async () => {
    const a = await stores.open(kind);
    const b = await a.again();
    const calls: Array<{ by: string; begin: number; end: number }> = [];
    let aStarted!: () => void;
    const aRunning = new Promise<void>((r) => (aStarted = r));
    const registryOf = (by: string) => {
      const registry = new TaskTypeRegistry();
      registry.register('job', {}, {
        run: async ({ signal }) => {
          const begin = performance.now();
          if (by === 'a') aStarted();
          // several leases long; ends early when aborted
          for (let i = 0; i < 40 && !signal.aborted; i++) await sleep((4 * LEASE_MS) / 40);
          calls.push({ by, begin, end: performance.now() });
          signal.throwIfAborted();
          return { by };
        },
      }, by);
      return registry;
    };
    const queue = new PriorityQueue({ store: b.store, registry: registryOf('b') });
    const t = await queue.submit({ type: 'job', concurrencyKey: 'flow-3' });
    const events = new TaskEvents();
    const errorsA: unknown[] = [];
    const workerA = new Worker({ store: a.store, registry: registryOf('a'), events, owner: 'a', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, onError: (e) => errorsA.push(e) });
    const workerB = new Worker({ store: b.store, registry: registryOf('b'), events, owner: 'b', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, onError: () => undefined });
    const end$ = ended(events, t.id);
    const realNow = Date.now;
    try {
      await workerA.start();
      await aRunning;
      Date.now = () => realNow() - STEP_MS;
      await workerB.start(); // recovers whatever lease runs out (by the store's clock)
      await end$;
      await sleep(500);
    } finally {
      Date.now = realNow;
      await workerA.stop();
      await workerB.stop();
    }
    expect(calls.map((c) => c.by)).toEqual(['a']);
    expect(await b.store.get(t.id)).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { by: 'a' }, attempts: 0 }); // no attempt failed or was taken over
  });
});
