/**
 * PostgreSQL, claims woken by a NOTIFY (schema/postgres/1-claim.sql woken_lock), at the scale
 * users have: many idle workers, each a real Worker on its own DataSource, as separate processes
 * would run them. A NOTIFY wakes them all; their claims must not queue behind the queue lock:
 * - one submit costs at most two claims that take the queue lock (counted by the server:
 *   pg_stat_statements runs of the claim's first statement under the lock), and the task
 *   starts once, on one worker;
 * - a burst reaches every worker (a full claim that leaves work NOTIFYs again);
 * - with the queue lock held elsewhere, woken claims come back while it is held, and the task
 *   starts once it is released;
 * - the waiter path: of two woken claims one waits holding the waiter key, the other returns;
 *   no session lock stays behind, also when the waiting claim is cancelled.
 * Nothing asserts on time: waits end on events (a claim answered, a handler started).
 */
import { DataSource } from 'typeorm';
import { PriorityQueue, TaskStatus, TaskTypeRegistry, Worker } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from '../../libs/priority-queue/src/stores/typeorm';
import { startPostgresServer, type SqlServerHandle } from '../support/servers/postgres-server';
import { countingStore, type StoreCalls } from '../core/support/counting-store';
import { plainTask } from '../support/new-task';

jest.setTimeout(180_000);

let server: SqlServerHandle;
let admin: DataSource;
const opened: Array<{ ds: DataSource; store: TypeOrmTaskStore; worker?: Worker }> = [];

beforeAll(async () => {
  // pg_stat_statements with track = all counts the statements run inside the claim function
  server = await startPostgresServer(['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all']);
  admin = new DataSource({ type: 'postgres', url: server.url, extra: { max: 4 } });
  await admin.initialize();
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
});

afterEach(async () => {
  for (const e of opened.splice(0).reverse()) {
    await e.worker?.stop().catch(() => undefined);
    await e.store.close().catch(() => undefined);
    await e.ds.destroy().catch(() => undefined);
  }
});

afterAll(async () => {
  await admin?.destroy().catch(() => undefined);
  await server?.stop();
});

/** A store on its own DataSource, as another process would open it. */
async function openStore(prefix: string): Promise<TypeOrmTaskStore> {
  const ds = new DataSource({ type: 'postgres', url: server.url, extra: { max: 3 } });
  await ds.initialize();
  const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: prefix });
  await store.init();
  opened.push({ ds, store });
  return store;
}

interface Fleet {
  queue: PriorityQueue;
  submitter: TypeOrmTaskStore;
  /** Per worker: its port calls (counted on its own store). */
  calls: StoreCalls[];
  /** Per worker: the task ids whose handler started there, in order. */
  ran: string[][];
}

/**
 * `n` started Workers, each on its own store and DataSource (safety poll out of reach: only
 * wake-ups make them claim), plus a store that submits; `run` is every handler. Resolves when
 * every worker's start-up claim was answered.
 */
async function fleet(prefix: string, n: number, run: (id: string) => Promise<void> | void, concurrency = 4): Promise<Fleet> {
  const submitter = await openStore(prefix);
  const registry = new TaskTypeRegistry();
  registry.register('job', {}, { run: () => undefined }, 'WokenJob');
  const calls: StoreCalls[] = [];
  const ran: string[][] = [];
  for (let k = 0; k < n; k++) {
    const own = new TaskTypeRegistry();
    const mine: string[] = [];
    own.register('job', {}, { run: ({ task }) => (mine.push(task.id), run(task.id)) }, 'WokenJob');
    const counted = countingStore(await openStore(prefix));
    const worker = new Worker({ store: counted.store, registry: own, concurrency, idlePollMs: 600_000, onError: () => undefined });
    opened[opened.length - 1].worker = worker;
    await worker.start();
    calls.push(counted.calls);
    ran.push(mine);
  }
  await Promise.all(calls.map((c) => c.answered('claimSubmissions', 1)));
  return { queue: new PriorityQueue({ store: submitter, registry }), submitter, calls, ran };
}

const claimsSent = (c: StoreCalls) => c.by.get('claimSubmissions') ?? 0;

/**
 * The claims each worker has sent so far, once every one of them was answered: a worker has
 * answered a claim sent after this point when its answers reach the count + 1.
 */
async function settledClaims(f: Fleet): Promise<number[]> {
  for (;;) {
    const sent = f.calls.map(claimsSent);
    await Promise.all(f.calls.map((c, k) => c.answered('claimSubmissions', sent[k])));
    if (f.calls.every((c, k) => claimsSent(c) === sent[k])) return sent;
  }
}

/** Runs of the claim's first statement under the queue lock (its probe) for the tables of `prefix`. */
async function lockedClaims(prefix: string): Promise<number> {
  const [r] = await admin.query(`SELECT coalesce(sum(calls), 0)::int AS n FROM pg_stat_statements WHERE query LIKE $1`, [
    `%SELECT boost_due FROM ${prefix}tasks%`,
  ]);
  return Number(r.n);
}

/** The queue lock keys of a store (what its claims pass to pg_advisory_xact_lock). */
function lockKeys(store: TypeOrmTaskStore): [number, number] {
  return (store as unknown as { ctx: { db: { lockKeys: [number, number] } } }).ctx.db.lockKeys;
}

/** A session of the test that holds the queue lock in an open transaction until release(). */
async function holdQueueLock(store: TypeOrmTaskStore): Promise<{ release(): Promise<void> }> {
  const qr = admin.createQueryRunner();
  await qr.connect();
  await qr.startTransaction();
  const [k1, k2] = lockKeys(store);
  await qr.query('SELECT pg_advisory_xact_lock($1, $2)', [k1, k2]);
  return {
    async release() {
      await qr.commitTransaction();
      await qr.release();
    },
  };
}

/** Advisory locks held or awaited now, by any session but the test's admin pool's lock holders. */
async function advisoryLocks(): Promise<Array<{ pid: number; objsubid: number; granted: boolean }>> {
  const rows: Array<{ pid: number; objsubid: number; granted: boolean }> = await admin.query(
    `SELECT pid, objsubid::int AS objsubid, granted FROM pg_locks WHERE locktype = 'advisory'`,
  );
  return rows.map((r) => ({ pid: Number(r.pid), objsubid: Number(r.objsubid), granted: Boolean(r.granted) }));
}

/** Resolves with the store's next claim answer after a NOTIFY reached it (a woken claim). */
async function wokenStores(prefix: string, n: number): Promise<{ stores: TypeOrmTaskStore[]; notified: Promise<void> }> {
  const stores: TypeOrmTaskStore[] = [];
  const arrived: Array<Promise<void>> = [];
  for (let k = 0; k < n; k++) {
    const s = await openStore(prefix);
    let got!: () => void;
    arrived.push(new Promise<void>((r) => (got = r)));
    await s.subscribe(() => got());
    stores.push(s);
  }
  return { stores, notified: Promise.all(arrived).then(() => undefined) };
}

const REQUEST = { limit: 4, leaseMs: 60_000 };

describe('PostgreSQL claims woken by a NOTIFY', () => {
  it('32 idle workers: one submit costs at most 2 claims that take the queue lock, and starts once on one worker', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const started: string[] = [];
    // concurrency 1: the worker that runs the task has no slot to claim for while it runs (a
    // busy worker claims its free slots every 250 ms), and the run lasts until every woken
    // claim was counted (its end claims again)
    const f = await fleet(
      'wk1_',
      32,
      async (id) => {
        started.push(id);
        await gate;
      },
      1,
    );
    const before = await settledClaims(f);
    await admin.query('SELECT pg_stat_statements_reset()');
    const task = await f.queue.submit({ type: 'job', payload: { n: 1 } });
    // every worker answers the claim of its wake-up (on main's code each waits for the lock)
    await Promise.all(f.calls.map((c, k) => c.answered('claimSubmissions', before[k] + 1)));
    while (started.length === 0) await new Promise((r) => setTimeout(r, 5));
    const locked = await lockedClaims('wk1_');
    open();
    expect(locked).toBeGreaterThanOrEqual(1);
    expect(locked).toBeLessThanOrEqual(2);
    expect(started).toEqual([task.id]);
    expect(f.ran.filter((r) => r.length > 0)).toHaveLength(1);
    while ((await f.submitter.get(task.id))?.status !== TaskStatus.SUCCEEDED) await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([task.id]);
  });

  it('a burst of 2,000 tasks submitted at once reaches every one of 32 workers, each task run once', async () => {
    const done = new Map<string, number>();
    let finished!: () => void;
    const all = new Promise<void>((r) => (finished = r));
    const total = 2000;
    const f = await fleet('wk2_', 32, async (id) => {
      await new Promise((r) => setTimeout(r, 2));
      done.set(id, (done.get(id) ?? 0) + 1);
      if (done.size === total) finished();
    });
    const tasks = await f.queue.submitMany(Array.from({ length: total }, (_, i) => ({ type: 'job', payload: { i } })));
    await all;
    expect(f.ran.map((r) => r.length).filter((x) => x === 0)).toEqual([]); // every worker ran some
    expect(f.ran.reduce((a, r) => a + r.length, 0)).toBe(total);
    expect([...done.values()].every((x) => x === 1)).toBe(true);
    expect(new Set(done.keys())).toEqual(new Set(tasks.map((t) => t.id)));
    const stats = await f.submitter.stats();
    expect(stats.pending.reduce((a, p) => a + p.count, 0)).toBe(0);
  });

  it('with the queue lock held by another session, woken claims come back while it is held; the task starts once it is released', async () => {
    const started: string[] = [];
    const f = await fleet('wk3_', 4, (id) => void started.push(id));
    const held = await holdQueueLock(f.submitter);
    const before = await settledClaims(f); // every claim sent from now on finds the lock held
    const task = await f.queue.submit({ type: 'job', payload: {} });
    // three of the four come back without the lock (the fourth may wait for it, as the waiter)
    let back = 0;
    await new Promise<void>((resolve) => f.calls.forEach((c, k) => void c.answered('claimSubmissions', before[k] + 1).then(() => ++back >= 3 && resolve())));
    expect(started).toEqual([]); // the lock is still held: nothing could be claimed
    await held.release();
    while ((await f.submitter.get(task.id))?.status !== TaskStatus.SUCCEEDED) await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([task.id]);
  });

  it('the waiter path: of two woken claims one waits holding the waiter key, the other returns; the waiter claims the task', async () => {
    const { stores, notified } = await wokenStores('wk4_', 2);
    const submitter = await openStore('wk4_');
    const held = await holdQueueLock(submitter);
    const task = (await submitter.create([plainTask({ id: `job-${Math.random().toString(36).slice(2)}`, payload: {} })]))[0].task;
    await notified;
    const claims = stores.map((s, k) => s.claimSubmissions({ owner: `w${k}`, ...REQUEST }).then((c) => ({ k, c })));
    const first = await Promise.race(claims);
    expect(first.c.claimed).toEqual([]); // came back while the lock is held
    // the other one waits for the queue lock, holding the waiter key (a bigint key: objsubid 1)
    const waiting = await waitFor(async () => {
      const locks = await advisoryLocks();
      const w = locks.find((l) => l.objsubid === 2 && !l.granted);
      return w && locks.some((l) => l.pid === w.pid && l.objsubid === 1 && l.granted) ? w.pid : null;
    });
    expect(waiting).toBeGreaterThan(0);
    await held.release();
    const second = await claims[1 - first.k];
    expect(second.c.claimed.map((t) => t.id)).toEqual([task.id]);
    expect(await advisoryLocks()).toEqual([]);
  });

  it('a waiting woken claim that is cancelled leaves no session lock on its connection', async () => {
    // the store's pool drops a connection whose statement failed, which would release a session
    // lock all the same: the claim function runs here on a connection the test keeps
    const submitter = await openStore('wk5_');
    const held = await holdQueueLock(submitter);
    await submitter.create([plainTask({ id: 'cancelled-waiter', payload: {} })]);
    const qr = admin.createQueryRunner();
    await qr.connect();
    try {
      const [{ pid }] = await qr.query('SELECT pg_backend_pid() AS pid');
      const [k1, k2] = lockKeys(submitter);
      // a woken claim (try) with work to do and the queue lock held: it takes the waiter key and waits
      const claim = qr.query(`SELECT count(*) FROM wk5_claim('default', NULL, 4, 60000, 'w', 'b', $1, $2, 0, false, NULL, true)`, [k1, k2]).then(
        () => null,
        (e: { code?: string }) => e,
      );
      await waitFor(async () => ((await advisoryLocks()).some((l) => l.pid === pid && l.objsubid === 2 && !l.granted) ? true : null));
      expect((await advisoryLocks()).filter((l) => l.pid === pid && l.objsubid === 1)).toHaveLength(1); // the waiter key
      await admin.query('SELECT pg_cancel_backend($1)', [pid]);
      expect((await claim)?.code).toBe('57014'); // query_canceled
      // the same session, still open: the waiter key it held was released
      expect(await qr.query(`SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`)).toEqual([]);
    } finally {
      await qr.release();
      await held.release();
    }
    expect(await advisoryLocks()).toEqual([]);
  });
});

/** Polls `probe` until it gives a value (no time limit of its own: the test's timeout is the bound). */
async function waitFor<T>(probe: () => Promise<T | null | undefined>): Promise<T> {
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
}
