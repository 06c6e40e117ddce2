import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { fenceOf, PriorityQueue, TaskStatus, TaskTypeRegistry, Worker } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { plainTask } from '../support/new-task';
import { openDatabase, type OpenDatabase } from './typeorm-dialects';

// A real PostgreSQL 15 server; never skipped.
jest.setTimeout(60_000);

/**
 * The PostgreSQL cold start (stores/typeorm/pg-warm-up.ts): a started Worker finds its pooled
 * connections open, with the store's hot PL/pgSQL functions compiled and its insert prepared on
 * each backend, so the first tasks do not pay for it; the warm-up writes nothing anyone can see;
 * a pool of one connection still works; the connections stay warm past the pool's idle timeout
 * and one the pool lost is replaced. What a backend holds is read on that backend:
 * pg_backend_memory_contexts (a compiled PL/pgSQL function has a context named after it) and
 * pg_prepared_statements (PgDirect's named statements).
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

const newTask = (id: string) => plainTask({ id, payload: { id } });

describe('TypeORM store on PostgreSQL: the worker starts on warm connections', () => {
  let db: OpenDatabase;
  const sources: DataSource[] = [];
  const stores: TypeOrmTaskStore[] = [];

  const open = async (extra: Record<string, unknown>, queue = 'q'): Promise<{ ds: DataSource; store: TypeOrmTaskStore }> => {
    const ds = new DataSource({ type: 'postgres', url: db.server!.url, extra } as never);
    await ds.initialize();
    sources.push(ds);
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: PREFIX, queue });
    await store.init();
    stores.push(store);
    return { ds, store };
  };

  const registry = () => {
    const r = new TaskTypeRegistry();
    r.register('job', {}, { run: () => null }, 'test');
    return r;
  };

  beforeAll(async () => {
    db = await openDatabase('postgres');
  });

  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close().catch(() => undefined);
    for (const ds of sources.splice(0)) await ds.destroy().catch(() => undefined);
  });

  afterAll(async () => {
    await db?.close();
  });

  it('a started worker finds concurrency + 1 pooled connections, each with the claim and complete functions compiled and the insert prepared', async () => {
    const { ds, store } = await open({ max: 20 });
    const worker = new Worker({ store, registry: registry(), concurrency: 6 });
    await worker.start();
    await worker.stop();
    const found = await backends(ds);
    expect(found).toHaveLength(7); // concurrency 6 + one claim in flight
    expect(new Set(found.map((b) => b.pid)).size).toBe(7);
    for (const b of found) expect(b).toEqual({ pid: b.pid, claimCompiled: true, completeCompiled: true, insertPrepared: true });
  });

  it('never takes more than the pool size less one connection, and a pool of one connection still runs tasks', async () => {
    const big = await open({ max: 4 }, 'q4');
    const w4 = new Worker({ store: big.store, registry: registry(), concurrency: 16 });
    await w4.start();
    await w4.stop();
    expect(poolOf(big.ds).totalCount).toBe(3);

    const { ds, store } = await open({ max: 1 }, 'q1');
    const reg = registry();
    const worker = new Worker({ store, registry: reg, concurrency: 4 });
    await worker.start();
    try {
      const [b] = await backends(ds);
      expect(b).toEqual({ pid: b.pid, claimCompiled: true, completeCompiled: true, insertPrepared: true });
      const queue = new PriorityQueue({ store, registry: reg });
      const ids = await Promise.all(Array.from({ length: 5 }, () => queue.submit({ type: 'job', payload: {} }).then((t) => t.id)));
      for (let i = 0; i < 200 && (await Promise.all(ids.map((id) => store.get(id)))).some((t) => t?.status !== TaskStatus.SUCCEEDED); i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      expect((await Promise.all(ids.map((id) => store.get(id)))).map((t) => t?.status)).toEqual(Array(5).fill(TaskStatus.SUCCEEDED));
    } finally {
      await worker.stop();
    }
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
    const stopWarm = await store.keepWarm(8);
    stopWarm();
    await new Promise((r) => setTimeout(r, 300)); // a NOTIFY would have come by now
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

  it('keeps the connections open past the pool idle timeout and replaces one the server dropped, warm', async () => {
    const { ds, store } = await open({ max: 10, idleTimeoutMillis: 1_500 }, 'qi');
    const worker = new Worker({ store, registry: registry(), concurrency: 3 });
    await worker.start();
    try {
      const first = await backends(ds);
      expect(first).toHaveLength(4);
      const admin = new Client({ connectionString: db.server!.url });
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [first[0].pid]);
      await admin.end();
      await new Promise((r) => setTimeout(r, 4_000)); // over two idle timeouts
      const later = await backends(ds);
      expect(later).toHaveLength(4);
      expect(later.filter((b) => first.some((f) => f.pid === b.pid))).toHaveLength(3);
      for (const b of later) expect(b).toEqual({ pid: b.pid, claimCompiled: true, completeCompiled: true, insertPrepared: true });
    } finally {
      await worker.stop();
    }
  });
});
