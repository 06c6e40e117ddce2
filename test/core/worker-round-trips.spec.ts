/**
 * issue 15 §1: a draining worker sends a turn's completes with its next claim in one store call
 * (TaskStore.completeAndClaim) instead of a complete call and a claim call, where the claim would
 * wait for the completes anyway (a store that runs one call at a time); on a store whose calls run
 * side by side it sends them apart (issue 12 §5: PostgreSQL / MariaDB drain lost a third). Counted, not timed:
 * the requests the store's own client sends its server (a script call, a statement; RealStores)
 * and the port calls (countingStore) per finished task, the same drain run with the store as it
 * is and with completeAndClaim hidden (the worker then calls complete() and claimSubmissions()).
 */
import { TaskEvents, TaskStatus, TaskTypeRegistry, Worker, type NewTask, type TaskStore } from '../../libs/priority-queue/src/core';
import { completesRideOnClaims } from '../../libs/priority-queue/src/core/worker';
import { countingStore } from './support/counting-store';
import { RealStores, type StoreKind } from './support/real-stores';
import { plainTask } from '../support/new-task';

jest.setTimeout(180_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

/** Tasks per drain: ten batches of 16. */
const N = 160;

/** The store without completeAndClaim (every other member as it is). */
function withoutCompleteAndClaim(store: TaskStore): TaskStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'completeAndClaim') return undefined;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

interface Drain {
  /** Requests to the server per finished task (0 on memory). */
  requests: number;
  /** Port calls that write outcomes or claim (complete, claimSubmissions, completeAndClaim) per finished task. */
  calls: number;
  combinedCalls: number;
  completesAlone: number;
}

async function drain(kind: StoreKind, concurrency: number, combined: boolean, poolSize?: number): Promise<Drain> {
  const opened = await stores.open(kind, { poolSize });
  const { store, calls } = countingStore(combined ? opened.store : withoutCompleteAndClaim(opened.store));
  const registry = new TaskTypeRegistry();
  registry.register('job', { idempotent: true }, { run: ({ payload }) => payload }, 'TestHandler');
  const events = new TaskEvents();
  const tasks: NewTask[] = Array.from({ length: N }, (_, i) =>
    plainTask({ id: `${kind}-${concurrency}-${combined}-${i}-${Math.random().toString(36).slice(2)}`, payload: { i }, maxAttempts: 3 }),
  );
  await store.create(tasks);
  let done = 0;
  let allDone!: () => void;
  const finished = new Promise<void>((r) => (allDone = r));
  events.on((e) => {
    if (e.to === TaskStatus.SUCCEEDED && ++done === N) allDone();
  });
  const errors: unknown[] = [];
  const worker = new Worker({ store, registry, events, concurrency, onError: (e) => errors.push(e) });
  const requestsBefore = opened.requests();
  calls.by.clear();
  await worker.start();
  await finished;
  const requests = opened.requests() - requestsBefore;
  const by = (m: string) => calls.by.get(m) ?? 0;
  const counted = by('complete') + by('claimSubmissions') + by('completeAndClaim');
  const out = { requests: requests / N, calls: counted / N, combinedCalls: by('completeAndClaim'), completesAlone: by('complete') };
  await worker.stop();
  expect(errors).toEqual([]);
  const stats = await opened.store.stats();
  expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(N);
  return out;
}

/**
 * Where the claim would wait for the completes anyway (one connection: Redis, SQLite), they ride
 * on it; where calls run side by side (a pool: PostgreSQL, MariaDB; no I/O: memory) the claim
 * goes beside them (core/worker.ts completesRideOnClaims, store.parallelCalls).
 */
const ridesOnClaims: Record<StoreKind, boolean> = { memory: false, redis: true, postgres: false, mariadb: false, sqlite: true };

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as const)('Worker round trips per finished task on %s', (kind) => {
  it('the store declares whether its calls run side by side, and the worker follows it', async () => {
    const { store } = await stores.open(kind);
    expect(typeof store.completeAndClaim).toBe('function');
    expect(completesRideOnClaims(store)).toBe(ridesOnClaims[kind]);
    expect(store.parallelCalls === true).toBe(!ridesOnClaims[kind]);
  });

  if (kind === 'postgres' || kind === 'mariadb') {
    it('on a pool of one connection the claim would wait for the completes: they ride on it', async () => {
      const { store } = await stores.open(kind, { poolSize: 1 });
      expect(completesRideOnClaims(store)).toBe(true);
      const together = await drain(kind, 16, true, 1);
      expect(together.combinedCalls).toBeGreaterThan(0);
      expect(together.completesAlone).toBeLessThan(N / 4);
    });
  }

  if (ridesOnClaims[kind]) {
    it.each([1, 16])('concurrency %i: the completes ride on the claims (completeAndClaim), fewer calls and requests per task', async (concurrency) => {
      const apart = await drain(kind, concurrency, false);
      const together = await drain(kind, concurrency, true);
      // without it: a complete and a claim per batch; with it, one call for both in a drain
      expect(apart.combinedCalls).toBe(0);
      expect(together.combinedCalls).toBeGreaterThan(0);
      // nearly every complete rode on a claim: only the last batch's, and any a busy round left, went alone
      expect(together.completesAlone).toBeLessThan(N / 4);
      expect(together.calls).toBeLessThan(apart.calls * 0.75);
      expect(together.requests).toBeLessThan(apart.requests);
      // eslint-disable-next-line no-console
      if (process.env.ROUND_TRIPS) console.log(kind, concurrency, { apart, together });
    });
  } else {
    it.each([1, 16])('concurrency %i: the claims go beside the completes (never completeAndClaim), as with it hidden', async (concurrency) => {
      const apart = await drain(kind, concurrency, false);
      const beside = await drain(kind, concurrency, true);
      expect(beside.combinedCalls).toBe(0);
      expect(beside.completesAlone).toBe(N);
      // the same calls as without completeAndClaim (claims may vary by one or two with timing)
      expect(beside.calls).toBeLessThan(apart.calls * 1.25);
      // eslint-disable-next-line no-console
      if (process.env.ROUND_TRIPS) console.log(kind, concurrency, { apart, beside });
    });
  }
});

/**
 * The idle claim cadence (a round claims again only after a full answer; a returning handler's
 * slot claims only when the last claim was full) must not slow a busy worker: while more is
 * claimable, the slot a handler frees is claimed at once, while that handler's outcome is still
 * being written (the claim overlaps the write), not once the write has answered. Here every
 * complete() waits at a gate that opens only after the test has seen the next handler start.
 */
describe.each(['memory', 'postgres', 'mariadb'] as const)('A busy worker on %s claims a freed slot before the outcome write answers', (kind) => {
  it('concurrency 1, a backlog of 3: the second handler starts while the first outcome is held', async () => {
    const opened = await stores.open(kind);
    expect(completesRideOnClaims(opened.store)).toBe(false); // the claim and the complete go apart here
    const held: Array<() => void> = [];
    let gateOpen = false;
    const gated = new Proxy(opened.store, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function') return v;
        if (prop !== 'complete') return (v as (...a: unknown[]) => unknown).bind(target);
        return async (...args: unknown[]) => {
          if (!gateOpen) await new Promise<void>((r) => held.push(r));
          return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    }) as TaskStore;
    const { store, calls } = countingStore(gated);
    const registry = new TaskTypeRegistry();
    const started: number[] = [];
    let secondStarted!: () => void;
    const second = new Promise<void>((r) => (secondStarted = r));
    // the handler returns a turn later: after the claim round that started it is over, so only its
    // return can ask for the next claim
    registry.register(
      'job',
      { idempotent: true },
      {
        run: async ({ payload }) => {
          if (started.push((payload as { i: number }).i) === 2) secondStarted();
          await new Promise((r) => setImmediate(r));
        },
      },
      'TestHandler',
    );
    const events = new TaskEvents();
    let done = 0;
    let allDone!: () => void;
    const finished = new Promise<void>((r) => (allDone = r));
    events.on((e) => {
      if (e.to === TaskStatus.SUCCEEDED && ++done === 3) allDone();
    });
    const ids = [0, 1, 2].map((i) => `busy-${kind}-${i}-${Math.random().toString(36).slice(2)}`);
    await opened.store.create(
      ids.map((id, i) => plainTask({ id, payload: { i }, priority: 10 - i, maxAttempts: 3 })),
    );
    const errors: unknown[] = [];
    const worker = new Worker({ store, registry, events, concurrency: 1, onError: (e) => errors.push(e) });
    await worker.start();
    // either the second handler starts (with the first outcome still held), or the worker settles
    // without claiming: every claim answered and none follows in the next turns
    const settledWithoutIt = (async () => {
      for (;;) {
        const c = calls.by.get('claimSubmissions') ?? 0;
        await calls.answered('claimSubmissions', c);
        for (let k = 0; k < 5; k++) await new Promise((r) => setImmediate(r));
        if ((calls.by.get('claimSubmissions') ?? 0) === c && held.length > 0 && started.length < 2) return 'settled';
        if (started.length >= 2) return 'started';
      }
    })();
    const outcome = await Promise.race([second.then(() => 'started'), settledWithoutIt]);
    const heldWhenSecondStarted = held.length;
    gateOpen = true;
    held.splice(0).forEach((r) => r());
    await finished;
    await worker.stop();
    expect(outcome).toBe('started');
    expect(heldWhenSecondStarted).toBeGreaterThan(0); // the first outcome was still being written
    expect(started).toEqual([0, 1, 2]);
    expect(errors).toEqual([]);
  });
});
