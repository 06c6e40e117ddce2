/**
 * DESIGN §4 and §3 (per-key mutual exclusion), when a worker cannot reach its store: a handler
 * runs on worker A, then A's connection is cut (a network partition: requests hang, nothing is
 * refused). A's renewals get no answer, its lease runs out, and worker B, which reaches the
 * store, recovers the task and runs it again. A's handler must have been aborted before B's
 * starts (reason: LeaseExpiredError), or the task would run twice at once and its concurrency
 * key would hold two runs. Once the partition heals, A's late outcome is fenced out (B's stands),
 * and A goes on with the next task by itself.
 *
 * The same when the store goes down (a restart: connections closed, new ones refused) right as
 * a handler returns: an outage shorter than the lease's rest loses no outcome (the write is
 * retried, the lease renewed between tries); a longer one gives the write up before the lease
 * ends and leaves the task to the recovery. On Redis the client holds commands while it
 * reconnects (maxRetriesPerRequest: null): there the write waits rather than fails.
 *
 * Real servers through a TcpProxy (test/support/tcp-proxy.ts) for Redis, PostgreSQL and
 * MariaDB; for the memory store and SQLite (no connection to cut), A's store is the same store
 * with its calls held back while "partitioned".
 */
import {
  LeaseExpiredError,
  StoreUnavailableError,
  PriorityQueue,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import { RealStores, type OpenedStore, type StoreKind } from './support/real-stores';
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

/**
 * Two stores on one queue, as two processes: A's can be cut off (partition) and healed (heal),
 * B's stays reachable. Redis / PostgreSQL / MariaDB: A goes through a TcpProxy; memory / SQLite:
 * A's calls are held back (heldBack).
 */
async function cutOffPair(kind: StoreKind): Promise<{ b: OpenedStore; storeA: TaskStore; partition(): void; heal(): void }> {
  const viaProxy = kind === 'redis' || kind === 'postgres' || kind === 'mariadb';
  const a = await stores.open(kind, { proxy: viaProxy });
  const b = await a.again();
  let release!: () => void;
  const cut = { on: false, off: new Promise<void>((r) => (release = r)) };
  return {
    b,
    storeA: viaProxy ? a.store : heldBack(a.store, cut),
    partition: () => (viaProxy ? a.proxy!.partition() : (cut.on = true)),
    heal: () => {
      a.proxy?.heal();
      cut.on = false;
      release();
    },
  };
}

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as const satisfies readonly StoreKind[])('Worker on %s cut off from its store while a handler runs', (kind) => {
  it('aborts the handler (LeaseExpiredError) before its lease runs out: the worker that recovers the task never runs beside it; once healed, it goes on', async () => {
    const { b, storeA, partition, heal: healAll } = await cutOffPair(kind);

    const seen: { aBegan?: number; aEnded?: number; aReason?: unknown; bBegan?: number; bEnded?: number } = {};
    let aStarted!: () => void;
    const aRunning = new Promise<void>((r) => (aStarted = r));
    const registryA = new TaskTypeRegistry();
    registryA.register('job', {}, {
      run: async ({ signal, payload }) => {
        if ((payload as { quick?: boolean } | null)?.quick) return { by: 'a' };
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
    await workerB.stop();
    healAll();
    // A goes on by itself once its store answers again: it runs the next task
    const next = await queue.submit({ type: 'job', payload: { quick: true } });
    for (let i = 0; i < 600 && (await b.store.get(next.id))?.status !== TaskStatus.SUCCEEDED; i++) await sleep(50);
    expect(await b.store.get(next.id)).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { by: 'a' } });
    await workerA.stop();

    expect(seen.aReason).toBeInstanceOf(LeaseExpiredError);
    expect(seen.bBegan).toBeDefined();
    // A's handler ended before B's began: never two runs of the task (and of key flow-1) at once
    expect(seen.aEnded!).toBeLessThanOrEqual(seen.bBegan!);
    expect(end.to).toBe(TaskStatus.SUCCEEDED);
    expect(await b.store.get(t.id)).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { by: 'b' }, attempts: 1 });
  });
});

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as const satisfies readonly StoreKind[])('Worker on %s whose claim reply comes after the lease ran out', (kind) => {
  it('does not start the handler: the worker that recovered the task runs it alone', async () => {
    const a = await stores.open(kind);
    const b = await a.again();
    const calls: Array<{ by: string; begin: number; end: number }> = [];
    const registryOf = (by: string) => {
      const registry = new TaskTypeRegistry();
      registry.register('job', {}, {
        run: async () => {
          const begin = Date.now();
          await sleep(300);
          calls.push({ by, begin, end: Date.now() });
          return { by };
        },
      }, by);
      return registry;
    };
    // A's first claim runs on the server at once; its reply reaches A only after the lease ran out
    let claimed!: () => void;
    const claimRan = new Promise<void>((r) => (claimed = r));
    let delayed = false;
    const storeA = new Proxy(a.store, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function') return v;
        const f = (v as (...args: unknown[]) => Promise<{ claimed?: unknown[] }>).bind(target);
        if (prop !== 'claimSubmissions' && prop !== 'completeAndClaim') return f;
        return async (...args: unknown[]) => {
          const out = await f(...args);
          if (!delayed && (out.claimed?.length ?? 0) > 0) {
            delayed = true;
            claimed();
            await sleep(LEASE_MS + 600);
          }
          return out;
        };
      },
    });
    const queue = new PriorityQueue({ store: b.store, registry: registryOf('b') });
    const t = await queue.submit({ type: 'job', concurrencyKey: 'flow-2' });
    const events = new TaskEvents();
    const workerA = new Worker({ store: storeA, registry: registryOf('a'), owner: 'a', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, onError: () => undefined });
    const workerB = new Worker({ store: b.store, registry: registryOf('b'), events, owner: 'b', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, onError: () => undefined });
    const end$ = ended(events, t.id);
    await workerA.start();
    await claimRan;
    await workerB.start();
    await end$;
    await sleep(800); // A has had the late reply by now
    await workerA.stop();
    await workerB.stop();
    expect(calls.map((c) => c.by)).toEqual(['b']);
    expect(await b.store.get(t.id)).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { by: 'b' } });
  });
});

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as const satisfies readonly StoreKind[])('Worker on %s stopped while cut off from its store', (kind) => {
  it('stop() returns within shutdownGraceMs + the hand-back wait, says what it gave up, and the task goes on elsewhere', async () => {
    const { b, storeA, partition, heal } = await cutOffPair(kind);
    let aStarted!: () => void;
    const aRunning = new Promise<void>((r) => (aStarted = r));
    const registryA = new TaskTypeRegistry();
    registryA.register('job', {}, {
      run: async ({ signal }) => {
        aStarted();
        await Promise.race([abortOf(signal), sleep(6 * LEASE_MS)]);
        signal.throwIfAborted();
        return { by: 'a' };
      },
    }, 'A');
    const registryB = new TaskTypeRegistry();
    registryB.register('job', {}, { run: () => ({ by: 'b' }) }, 'B');
    const queue = new PriorityQueue({ store: b.store, registry: registryB });
    const t = await queue.submit({ type: 'job' });
    const errorsA: unknown[] = [];
    const graceMs = 300;
    const workerA = new Worker({ store: storeA, registry: registryA, owner: 'a', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, shutdownGraceMs: graceMs, onError: (e) => errorsA.push(e) });
    await workerA.start();
    await aRunning;
    partition();
    const t0 = Date.now();
    const stopped = await Promise.race([workerA.stop().then(() => true), sleep(15_000).then(() => false)]);
    const tookMs = Date.now() - t0;
    expect({ stopped, inTime: tookMs <= graceMs + LEASE_MS + 1000 }).toEqual({ stopped: true, inTime: true });
    expect(errorsA.some((e) => e instanceof StoreUnavailableError)).toBe(true);

    const events = new TaskEvents();
    const end$ = ended(events, t.id);
    const workerB = new Worker({ store: b.store, registry: registryB, events, owner: 'b', concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 100, idlePollMs: 50, onError: () => undefined });
    await workerB.start();
    expect((await end$).to).toBe(TaskStatus.SUCCEEDED);
    await workerB.stop();
    heal();
    expect(await b.store.get(t.id)).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { by: 'b' } });
  });
});

/**
 * A's store "goes down" (a restart: connections closed, new ones refused; for memory / SQLite its
 * calls fail) right as A's handler returns, and comes back after `outageMs`. Returns what the
 * task ended as, who ran it, A's tries to write an outcome (local time, failed or not) and when
 * the store came back. The task is not idempotent, so a lost outcome shows: the recovery (B)
 * ends it SUBMIT_UNKNOWN and nobody runs it again.
 */
async function outcomeThroughOutage(kind: StoreKind, leaseMs: number, outageMs: number) {
  const viaProxy = kind === 'redis' || kind === 'postgres' || kind === 'mariadb';
  const a = await stores.open(kind, { proxy: viaProxy });
  const b = await a.again();
  const isDown = { on: false };
  const writes: Array<{ at: number; failed: boolean }> = [];
  const storeA = new Proxy(a.store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const f = (v as (...args: unknown[]) => Promise<unknown>).bind(target);
      const call = (...args: unknown[]) => (isDown.on ? Promise.reject(new Error('connection lost (test: store down)')) : f(...args));
      if (prop !== 'complete' && prop !== 'completeAndClaim') return call;
      return async (...args: unknown[]) => {
        const w = { at: Date.now(), failed: true };
        writes.push(w);
        const out = await call(...args);
        w.failed = false;
        return out;
      };
    },
  });
  const down = () => (viaProxy ? a.proxy!.down() : (isDown.on = true));
  const up = () => (viaProxy ? a.proxy!.up() : (isDown.on = false));

  const runs: string[] = [];
  let returnNow!: () => void;
  const mayReturn = new Promise<void>((r) => (returnNow = r));
  let aStarted!: () => void;
  const aRunning = new Promise<void>((r) => (aStarted = r));
  const registryOf = (by: string) => {
    const registry = new TaskTypeRegistry();
    registry.register('charge', { idempotent: false }, {
      run: async () => {
        runs.push(by);
        if (by === 'a') {
          aStarted();
          await mayReturn;
        }
        return { by };
      },
    }, by);
    return registry;
  };
  const queue = new PriorityQueue({ store: b.store, registry: registryOf('b') });
  const t = await queue.submit({ type: 'charge', concurrencyKey: 'flow-3' });
  const workerA = new Worker({ store: storeA, registry: registryOf('a'), owner: 'a', concurrency: 1, leaseMs, recoverEveryMs: 100, idlePollMs: 50, onError: () => undefined });
  await workerA.start();
  await aRunning;
  const workerB = new Worker({ store: b.store, registry: registryOf('b'), owner: 'b', concurrency: 1, leaseMs, recoverEveryMs: 100, idlePollMs: 50, onError: () => undefined });
  await workerB.start();
  down();
  returnNow();
  await sleep(outageMs);
  const upAt = Date.now();
  up();
  let task = await b.store.get(t.id);
  for (let i = 0; i < 200 && task?.status === TaskStatus.SUBMITTING; i++) {
    await sleep(50);
    task = await b.store.get(t.id);
  }
  await sleep(300); // a late write of A, if any, would land now
  await workerB.stop();
  await workerA.stop();
  task = await b.store.get(t.id);
  return { task: task!, runs, writes, upAt };
}

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as const satisfies readonly StoreKind[])('Worker on %s whose store goes down as a handler returns', (kind) => {
  it('an outage shorter than the lease loses nothing: the outcome is written once the store is back (the lease renewed meanwhile), not left to the recovery', async () => {
    // lease 6 s, renewed every ~2 s while the handler ran: 4 s or more of it left when the store
    // goes down; the outage (2 s) outlasts the write's first four tries (at 0, 50, 300, 1300 ms)
    const { task, runs, writes } = await outcomeThroughOutage(kind, 6000, 2000);
    expect([task.status, task.result, task.attempts]).toEqual([TaskStatus.SUCCEEDED, { by: 'a' }, 0]);
    expect(runs).toEqual(['a']);
    expect(writes.filter((w) => !w.failed)).toHaveLength(1);
  });
});

// the rule is the worker's (the short outage above covers each store's failures): one store
describe.each(['memory'] as const satisfies readonly StoreKind[])('Worker on %s whose store stays down longer than the lease', (kind) => {
  it('gives the write up before the lease ends: the recovery has the task, and A tries nothing after', async () => {
    const { task, runs, writes, upAt } = await outcomeThroughOutage(kind, 3000, 4500);
    expect(task.status).toBe(TaskStatus.SUBMIT_UNKNOWN); // not idempotent: the recovery cannot know whether it ran
    expect(runs).toEqual(['a']);
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.filter((w) => !w.failed || w.at >= upAt)).toEqual([]);
  });
});
