/**
 * DESIGN §4 and §3 (per-key mutual exclusion), when a worker cannot reach its store: a handler
 * runs on worker A, then A's connection is cut (a network partition: requests hang, nothing is
 * refused). A's renewals get no answer, its lease runs out, and worker B, which reaches the
 * store, recovers the task and runs it again. A's handler must have been aborted before B's
 * starts (reason: LeaseExpiredError), or the task would run twice at once and its concurrency
 * key would hold two runs. Once the partition heals, A's late outcome is fenced out: B's stands.
 *
 * Real servers through a TcpProxy (test/support/tcp-proxy.ts) for Redis, PostgreSQL and
 * MariaDB; for the memory store and SQLite (no connection to cut), A's store is the same store
 * with its calls held back while "partitioned".
 */
import {
  LeaseExpiredError,
  PriorityQueue,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import { RealStores, type StoreKind } from './support/real-stores';
import { abortOf, ended, sleep } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

const LEASE_MS = 1500;

/** A store whose calls hang while `cut.on` (and go on once it is off), as over a partitioned link. */
function heldBack(store: TaskStore, cut: { on: boolean; off: Promise<void> }): TaskStore {
  return new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const f = (v as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => (cut.on ? cut.off.then(() => f(...args)) : f(...args));
    },
  });
}

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as const satisfies readonly StoreKind[])('Worker on %s cut off from its store while a handler runs', (kind) => {
  it('aborts the handler (LeaseExpiredError) before its lease runs out: the worker that recovers the task never runs beside it', async () => {
    const viaProxy = kind === 'redis' || kind === 'postgres' || kind === 'mariadb';
    const a = await stores.open(kind, { proxy: viaProxy });
    const b = await a.again();
    let heal!: () => void;
    const cut = { on: false, off: new Promise<void>((r) => (heal = r)) };
    const storeA = viaProxy ? a.store : heldBack(a.store, cut);
    const partition = () => (viaProxy ? a.proxy!.partition() : (cut.on = true));
    const healAll = () => {
      if (viaProxy) a.proxy!.heal();
      cut.on = false;
      heal();
    };

    const seen: { aBegan?: number; aEnded?: number; aReason?: unknown; bBegan?: number; bEnded?: number } = {};
    let aStarted!: () => void;
    const aRunning = new Promise<void>((r) => (aStarted = r));
    const registryA = new TaskTypeRegistry();
    registryA.register('job', {}, {
      run: async ({ signal }) => {
        seen.aBegan = Date.now();
        aStarted();
        await Promise.race([abortOf(signal), sleep(6 * LEASE_MS)]);
        seen.aEnded = Date.now();
        seen.aReason = signal.reason;
        signal.throwIfAborted();
        return { by: 'a' };
      },
    }, 'A');
    const registryB = new TaskTypeRegistry();
    registryB.register('job', {}, {
      run: async () => {
        seen.bBegan = Date.now();
        await sleep(20);
        seen.bEnded = Date.now();
        return { by: 'b' };
      },
    }, 'B');

    const events = new TaskEvents();
    const queue = new PriorityQueue({ store: b.store, registry: registryB });
    const t = await queue.submit({ type: 'job', concurrencyKey: 'flow-1' });
    const errorsA: unknown[] = [];
    const workerA = new Worker({ store: storeA, registry: registryA, owner: 'a', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, onError: (e) => errorsA.push(e) });
    await workerA.start();
    await aRunning;
    partition();
    const workerB = new Worker({ store: b.store, registry: registryB, events, owner: 'b', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, onError: () => undefined });
    const end$ = ended(events, t.id);
    await workerB.start();
    const end = await end$;
    healAll();
    await workerA.stop();
    await workerB.stop();

    expect(seen.aReason).toBeInstanceOf(LeaseExpiredError);
    expect(seen.bBegan).toBeDefined();
    // A's handler ended before B's began: never two runs of the task (and of key flow-1) at once
    expect(seen.aEnded!).toBeLessThanOrEqual(seen.bBegan!);
    expect(end.to).toBe(TaskStatus.SUCCEEDED);
    expect(await b.store.get(t.id)).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { by: 'b' }, attempts: 1 });
  });
});
