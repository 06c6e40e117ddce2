import * as pg from 'pg';
import { DataSource } from 'typeorm';
import { fenceOf, PriorityQueue, TaskStatus, TaskTypeRegistry, Worker } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { plainTask } from '../support/new-task';
import { startPostgresServer } from '../support/servers/postgres-server';
import { openDatabase, type OpenDatabase } from './typeorm-dialects';

// A real PostgreSQL 15 server; never skipped.
jest.setTimeout(60_000);

/**
 * The PostgreSQL warm-up (stores/typeorm/pg-warm-up.ts): a started Worker asks the store to warm
 * the pooled connections it may use, in the pool's idle time, without holding the worker's start
 * or its claims; the warm-up opens no more than the worker can use and keeps none past the pool's
 * own idle timeout; it writes nothing anyone can see; a pool of one is left alone; a server
 * restart in the middle of it is no uncaught 'error'. What a backend holds is read on that
 * backend: pg_backend_memory_contexts (a compiled PL/pgSQL function has a context named after it)
 * and pg_prepared_statements (PgDirect's named statements). The warm-up's own statements are told
 * apart by its queue name (a control character no real queue can have) in their parameters.
 */
const PREFIX = 'wu_';

interface PgClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  release(): void;
}
interface PgPool {
  connect(): Promise<PgClient>;
  readonly totalCount: number;
  readonly idleCount: number;
}

const poolOf = (ds: DataSource) => (ds.driver as unknown as { master: PgPool }).master;

/** What each of the pool's connections holds: all of them checked out at once, so each is a distinct backend. */
async function backends(ds: DataSource): Promise<Array<{ pid: number; claimCompiled: boolean; completeCompiled: boolean; insertPrepared: boolean }>> {
  const pool = poolOf(ds);
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
  try {
    return await Promise.all(
      clients.map(async (c) => {
        const { rows } = await c.query(
          `SELECT pg_backend_pid() AS pid,
             EXISTS (SELECT 1 FROM pg_backend_memory_contexts WHERE name = 'PL/pgSQL function' AND ident LIKE $1) AS claim,
             EXISTS (SELECT 1 FROM pg_backend_memory_contexts WHERE name = 'PL/pgSQL function' AND ident LIKE $2) AS complete,
             EXISTS (SELECT 1 FROM pg_prepared_statements WHERE statement LIKE 'WITH n AS%INSERT INTO ${PREFIX}tasks%') AS insert`,
          [`${PREFIX}claim(%`, `${PREFIX}complete_leased(%`],
        );
        return { pid: Number(rows[0].pid), claimCompiled: rows[0].claim === true, completeCompiled: rows[0].complete === true, insertPrepared: rows[0].insert === true };
      }),
    );
  } finally {
    for (const c of clients) c.release();
  }
}

/**
 * Every statement the warm-up sends (its parameters name its queue), with the time it was sent
 * and the backend it went to; `onWarm` is called at each.
 */
const warmSent: Array<{ at: number; pid: number }> = [];
let onWarm: ((pid: number) => void) | null = null;
const clientProto = (pg as unknown as { Client: { prototype: { query: (...a: unknown[]) => unknown; processID?: number } } }).Client.prototype;
const originalQuery = clientProto.query;
const isWarmUp = (a: unknown[]): boolean => {
  const values = (a[0] as { values?: unknown })?.values ?? a[1];
  return Array.isArray(values) && String(values).includes('\u0001warm-up');
};

const newTask = (id: string) => plainTask({ id, payload: { id } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('TypeORM store on PostgreSQL: warming pooled connections in the pool idle time', () => {
  let db: OpenDatabase;
  const sources: DataSource[] = [];
  const stores: TypeOrmTaskStore[] = [];
  const workers: Worker[] = [];

  const open = async (extra: Record<string, unknown>, queue = 'q'): Promise<{ ds: DataSource; store: TypeOrmTaskStore }> => {
    const ds = new DataSource({ type: 'postgres', url: db.server!.url, extra } as never);
    await ds.initialize();
    sources.push(ds);
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: PREFIX, queue });
    await store.init();
    stores.push(store);
    return { ds, store };
  };

  const registry = (run: (payload: unknown) => void = () => undefined) => {
    const r = new TaskTypeRegistry();
    r.register('job', {}, { run: ({ payload }) => (run(payload), null) }, 'test');
    return r;
  };

  const started = (w: Worker) => (workers.push(w), w);

  beforeAll(async () => {
    db = await openDatabase('postgres');
    clientProto.query = function (this: { processID?: number }, ...a: unknown[]) {
      if (isWarmUp(a)) {
        warmSent.push({ at: performance.now(), pid: this.processID ?? 0 });
        onWarm?.(this.processID ?? 0);
      }
      return originalQuery.apply(this, a);
    };
  });

  beforeEach(() => {
    warmSent.length = 0;
    onWarm = null;
  });

  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop().catch(() => undefined);
    for (const s of stores.splice(0)) await s.close().catch(() => undefined);
    for (const ds of sources.splice(0)) await ds.destroy().catch(() => undefined);
  });

  afterAll(async () => {
    clientProto.query = originalQuery;
    await db?.close();
  });

  it("a worker started on a backlog starts its first task before the warm-up sends anything, and the warm-up waits for the drain's end", async () => {
    const { ds, store } = await open({ max: 20 }, 'qb');
    await store.create(Array.from({ length: 300 }, (_, i) => newTask(`b${i}`)));
    let firstStart = 0;
    let lastStart = 0;
    let n = 0;
    const worker = started(
      new Worker({
        store,
        registry: registry(() => {
          firstStart ||= performance.now();
          lastStart = performance.now();
          n++;
        }),
        concurrency: 8,
      }),
    );
    await worker.start();
    await until('the backlog drained', () => n === 300);
    await until('the warm-up ran', () => warmSent.length > 0);
    await store.warmedUp();
    // the warm-up ran (so the order below says something) and only once the drain was over
    expect(warmSent[0].at).toBeGreaterThan(firstStart);
    expect(warmSent[0].at).toBeGreaterThan(lastStart);
    // it warmed what the worker may use at once: concurrency 8 + one claim in flight
    const found = await backends(ds);
    expect(found.filter((b) => b.claimCompiled && b.completeCompiled && b.insertPrepared).length).toBeGreaterThanOrEqual(9);
  });

  it("opens no more than the worker's calls at once and the pool size less one, and keeps none past the pool's idleTimeoutMillis", async () => {
    const small = await open({ max: 4 }, 'q4');
    started(new Worker({ store: small.store, registry: registry(), concurrency: 16 }));
    await workers[0].start();
    await until('the warm-up ran', () => warmSent.length > 0);
    await small.store.warmedUp();
    expect(poolOf(small.ds).totalCount).toBe(3);

    const { ds, store } = await open({ max: 20, idleTimeoutMillis: 1_500 }, 'qi');
    const sent = warmSent.length;
    const worker = started(new Worker({ store, registry: registry(), concurrency: 6 }));
    await worker.start();
    await until('the warm-up ran', () => warmSent.length > sent);
    await store.warmedUp();
    expect(poolOf(ds).totalCount).toBe(7); // concurrency 6 + one claim in flight
    const found = await backends(ds);
    expect(new Set(found.map((b) => b.pid)).size).toBe(7);
    for (const b of found) expect(b).toEqual({ pid: b.pid, claimCompiled: true, completeCompiled: true, insertPrepared: true });
    // the worker runs on, idle: the pool's idle timeout closes what it does not use
    await sleep(3_000);
    expect(poolOf(ds).totalCount).toBeLessThanOrEqual(1);
  });

  it('on a pool of one connection the warm-up takes nothing, and tasks run', async () => {
    const { store } = await open({ max: 1 }, 'q1');
    const reg = registry();
    const worker = started(new Worker({ store, registry: reg, concurrency: 4 }));
    await worker.start();
    const queue = new PriorityQueue({ store, registry: reg });
    const ids = await Promise.all(Array.from({ length: 5 }, () => queue.submit({ type: 'job', payload: {} }).then((t) => t.id)));
    await until('the tasks ran', async () => (await Promise.all(ids.map((id) => store.get(id)))).every((t) => t?.status === TaskStatus.SUCCEEDED));
    await sleep(300); // idle: a warm-up would have its quiet spell by now
    await store.warmedUp();
    expect(warmSent).toEqual([]);
  });

  it('the warm-up claims, changes and writes nothing: tasks of the queue, leased or pending, and every table stay as they were', async () => {
    const { ds, store } = await open({ max: 10 }, 'qn');
    await store.create([newTask('a'), newTask('b'), newTask('c')]);
    const claim = await store.claimSubmissions({ owner: 'me', limit: 1, leaseMs: 60_000 });
    const counts = async () =>
      Object.fromEntries(
        await Promise.all(
          ['tasks', 'lanes', 'lane_marks', 'releases', 'resources', 'queues', 'fair_levels'].map(async (t) => [t, Number((await ds.query(`SELECT count(*) AS n FROM ${PREFIX}${t}`))[0].n)]),
        ),
      );
    const before = { tasks: await Promise.all(['a', 'b', 'c'].map((id) => store.get(id))), counts: await counts() };
    const wakes: string[] = [];
    const off = await store.subscribe(() => wakes.push('wake')); // LISTENs on the queue's channel
    const withdraw = store.warmUp(8);
    await until('the warm-up ran', () => warmSent.length > 0);
    await store.warmedUp();
    withdraw();
    await sleep(300); // a NOTIFY would have come by now
    await off();
    expect(wakes).toEqual([]);
    expect(await Promise.all(['a', 'b', 'c'].map((id) => store.get(id)))).toEqual(before.tasks);
    expect(await counts()).toEqual(before.counts);
    // the leased task completes with its fence as claimed: the warm-up bumped nothing
    const done = await store.complete(fenceOf(claim.claimed[0]), { status: TaskStatus.SUCCEEDED, result: null });
    expect(done.status).toBe(TaskStatus.SUCCEEDED);
    // and the next claim takes the next pending task, in order
    expect((await store.claimSubmissions({ owner: 'me', limit: 5, leaseMs: 60_000 })).claimed.map((t) => t.id)).toEqual(['b', 'c']);
  });

  it('warm-ups in several pools together take the server to half its max_connections and no further', async () => {
    // a server of its own, with 24 connections
    const small = await startPostgresServer({ max_connections: 24 });
    try {
      const errors: unknown[] = [];
      const pools: Array<{ ds: DataSource; store: TypeOrmTaskStore }> = [];
      for (const q of ['g1', 'g2', 'g3']) {
        const ds = new DataSource({ type: 'postgres', url: small.url, extra: { max: 20 } } as never);
        await ds.initialize();
        sources.push(ds);
        const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: PREFIX, queue: q });
        await store.init();
        stores.push(store);
        pools.push({ ds, store });
      }
      const ws = pools.map(({ store }) => started(new Worker({ store, registry: registry(), concurrency: 16, onError: (e) => errors.push(e) })));
      await Promise.all(ws.map((w) => w.start()));
      await until('the warm-ups ran', () => warmSent.length > 0);
      await sleep(500);
      await Promise.all(pools.map(({ store }) => store.warmedUp()));
      const admin = new pg.Client({ connectionString: small.url });
      await admin.connect();
      const [{ n }] = (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'`)).rows;
      await admin.end();
      // 12 = 24 / 2, and the count's own connection; the three LISTEN connections and what the
      // stores' own calls opened are within the 12
      expect(n).toBeLessThanOrEqual(13);
      expect(errors).toEqual([]);
    } finally {
      for (const w of workers.splice(0)) await w.stop().catch(() => undefined);
      for (const st of stores.splice(0)) await st.close().catch(() => undefined);
      for (const ds of sources.splice(0)) await ds.destroy().catch(() => undefined);
      await small.stop();
    }
  });

  // last: it restarts the file's server
  it('a server restart in the middle of a warm-up is no uncaught error, and the worker runs tasks after it', async () => {
    const { store } = await open({ max: 10 }, 'qr');
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      let restarting: Promise<void> | null = null;
      onWarm = () => (restarting ??= db.server!.restart());
      const reg = registry();
      const worker = started(new Worker({ store, registry: reg, concurrency: 4 }));
      await worker.start();
      await until('a warm-up statement', () => restarting !== null);
      await restarting;
      await store.warmedUp();
      const queue = new PriorityQueue({ store, registry: reg });
      let id = '';
      await until('a submit after the restart', async () => {
        id = await queue.submit({ type: 'job', payload: {} }).then(
          (t) => t.id,
          () => '',
        );
        return id !== '';
      });
      await until('the task ran', async () => (await store.get(id))?.status === TaskStatus.SUCCEEDED);
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});
