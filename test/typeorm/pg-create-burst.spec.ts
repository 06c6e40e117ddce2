import { DataSource } from 'typeorm';
import { PriorityQueue, TaskTypeRegistry, type Task } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { openDatabase, type OpenDatabase } from './typeorm-dialects';

// A real PostgreSQL 15 server; never skipped. ~10 s.
jest.setTimeout(60_000);

/**
 * Single creates on PostgreSQL (PriorityQueue.submit) share statements under a burst, at most two
 * out per store (sql/create-batch.pg.ts). Before, each unawaited submit took a pooled connection
 * of its own: after a quiet spell (node-pg closes idle connections) a burst opened cold
 * connections up to the pool's size, and its p99 went to hundreds of ms
 * (test/bench/profile/pg-quiet-burst.ts). Here: the connections a burst takes, every call with
 * its own task, and the two ways a shared statement fails: refused by the server (sent again
 * task by task, the refusal reaches only its call) and cut off (outcome unknown: every call of
 * the statement rejects, nothing is sent again).
 */
describe('TypeORM store on PostgreSQL: a burst of single submits', () => {
  let db: OpenDatabase;
  let ds: DataSource;
  let connects = 0;
  const registry = new TaskTypeRegistry();
  registry.register('job', {});

  beforeAll(async () => {
    db = await openDatabase('postgres');
    // idle connections closed after 100 ms: each test's burst meets a cold pool, as after a quiet spell
    ds = new DataSource({ type: 'postgres', url: db.server!.url, poolSize: 20, extra: { idleTimeoutMillis: 100 } } as never);
    await ds.initialize();
    (ds.driver as unknown as { master: { on(e: 'connect', f: () => void): void } }).master.on('connect', () => connects++);
  });

  afterAll(async () => {
    await ds?.destroy().catch(() => undefined);
    await db?.close();
  });

  async function open(prefix: string): Promise<{ store: TypeOrmTaskStore; queue: PriorityQueue; rows: () => Promise<Array<{ id: string; seq: string; payload: string }>> }> {
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: prefix });
    await store.init();
    const queue = new PriorityQueue({ store, registry });
    return { store, queue, rows: () => ds.query(`SELECT id, seq, payload FROM ${prefix}tasks ORDER BY seq`) };
  }

  const quiet = () => new Promise((r) => setTimeout(r, 400)); // the pool's idle connections close

  it('400 submits over ~80 ms after a quiet spell: each call gets its own task, each written once, over at most 2 new connections', async () => {
    const { store, queue, rows } = await open('cb_burst_');
    await quiet();
    const before = connects;
    const calls: Array<Promise<Task>> = [];
    for (let i = 0; i < 400; i++) {
      calls.push(queue.submit({ type: 'job', payload: { i } }));
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 2));
    }
    const tasks = await Promise.all(calls);
    expect(connects - before).toBeLessThanOrEqual(2);
    expect(tasks.map((t) => (t.payload as { i: number }).i)).toEqual(tasks.map((_, i) => i));
    const written = await rows();
    expect(written.map((r) => r.id).sort()).toEqual(tasks.map((t) => t.id).sort());
    expect(new Set(tasks.map((t) => t.seq)).size).toBe(400);
    for (const t of tasks) expect(written.find((r) => r.id === t.id)!.seq).toBe(String(t.seq));
    await store.close();
  });

  it('a statement the server refuses is sent again task by task: the refusal reaches only its own call', async () => {
    const { store, queue, rows } = await open('cb_refused_');
    // a server-side refusal of one task (a real constraint, as a bad row would meet)
    await ds.query(`ALTER TABLE cb_refused_tasks ADD CONSTRAINT test_refuse CHECK (payload NOT LIKE '%refuse-me%')`);
    // one turn: the first two go at once, the other eight share one statement (the refused one among them)
    const out = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => queue.submit({ type: 'job', payload: { i, mark: i === 5 ? 'refuse-me' : 'ok' } })));
    expect(out.map((o) => o.status)).toEqual(out.map((_, i) => (i === 5 ? 'rejected' : 'fulfilled')));
    expect(String((out[5] as PromiseRejectedResult).reason)).toMatch(/test_refuse/);
    const written = await rows();
    expect(written).toHaveLength(9);
    expect(written.map((r) => (JSON.parse(r.payload) as { i: number }).i).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9]);
    await store.close();
  });

  it('a statement cut off mid-way (its backend terminated) rejects every call it carried and is not sent again', async () => {
    const { store, queue, rows } = await open('cb_cut_');
    // the shared statement sleeps inside the INSERT while the test terminates its backend
    await ds.query(`CREATE FUNCTION cb_cut_slow() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.payload LIKE '%slow-me%' THEN PERFORM pg_sleep(5); END IF; RETURN NEW; END $$`);
    await ds.query(`CREATE TRIGGER cb_cut_slow BEFORE INSERT ON cb_cut_tasks FOR EACH ROW EXECUTE FUNCTION cb_cut_slow()`);
    const calls = Array.from({ length: 10 }, (_, i) => queue.submit({ type: 'job', payload: { i, mark: i === 5 ? 'slow-me' : 'ok' } }));
    const settled = Promise.allSettled(calls);
    let pid: number | undefined;
    for (let k = 0; k < 200 && pid === undefined; k++) {
      await new Promise((r) => setTimeout(r, 20));
      const [row] = (await ds.query(`SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%cb_cut_tasks%'`)) as Array<{ pid: number }>;
      pid = row?.pid;
    }
    expect(pid).toBeDefined();
    await ds.query('SELECT pg_terminate_backend($1)', [pid]);
    const out = await settled;
    expect(out.map((o) => o.status)).toEqual(out.map((_, i) => (i < 2 ? 'fulfilled' : 'rejected')));
    for (const o of out.slice(2)) expect(String((o as PromiseRejectedResult).reason)).toMatch(/terminat/);
    // the two sent alone, and nothing of the statement that was cut off, nor sent again
    await new Promise((r) => setTimeout(r, 300));
    expect((await rows()).map((r) => (JSON.parse(r.payload) as { i: number }).i).sort()).toEqual([0, 1]);
    await store.close();
  });
});
