import type { DataSource } from 'typeorm';
import { fenceOf, ManualClock, TaskStatus, type NewTask } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { plainTask } from '../support/new-task';
import { openDatabase, type DialectName, type OpenDatabase } from './typeorm-dialects';

/**
 * The claim's merge of due staged tasks on the generic SQL path (sql/merge-staged.ts) and, on
 * MySQL / MariaDB, its stage marks (sql/stage-marks.ts): every staged task keeps a mark at or
 * before its run_at, so a claim at any later time finds it; a claim writes a new mark only for
 * what its spent marks covered and no other mark covers; its nextWakeAt names the next due
 * time. Then the statements a MariaDB claim of one task that just became due sends (the
 * latency path): none of the re-mark, the next-wake read or the merged rows' own UPDATE.
 */
const DIALECTS: DialectName[] = ['mariadb', 'sqlite'];

describe.each(DIALECTS)('TypeORM %s claim: staged tasks across delays', (name) => {
  let db: OpenDatabase;
  let n = 0;
  beforeAll(async () => {
    db = await openDatabase(name);
  });
  afterAll(async () => {
    await db?.close();
  });

  async function open(): Promise<{ store: TypeOrmTaskStore; clock: ManualClock; T0: number; queue: string }> {
    const clock = new ManualClock();
    const queue = `staging_${++n}`;
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'stg_', queue, clock });
    await store.init();
    return { store, clock, T0: clock.now(), queue };
  }
  let ids = 0;
  const task = (over: Partial<NewTask> = {}): NewTask => plainTask({ id: `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`, payload: null, ...over });
  const claim = async (store: TypeOrmTaskStore, limit = 10) => {
    const r = await store.claimSubmissions({ owner: 'w', limit, leaseMs: 60_000 });
    return { ids: r.claimed.map((t) => t.id), wake: r.nextWakeAt };
  };

  /** MySQL: every staged PENDING_SUBMIT task of the queue has a stage mark at or before its run_at. */
  async function expectMarked(ds: DataSource, queue: string): Promise<void> {
    if (name !== 'mariadb') return;
    const rows = (await ds.query(
      `SELECT t.id FROM stg_tasks t WHERE t.queue = ? AND t.status = 'PENDING_SUBMIT' AND t.staged = 1
         AND NOT EXISTS (SELECT 1 FROM stg_stage_marks m WHERE m.queue = t.queue AND m.run_at <= t.run_at)`,
      [queue],
    )) as Array<{ id: string }>;
    expect(rows).toEqual([]);
  }

  it('one create of tasks due now, in 1 s and in 2 s: each is claimed when due, and nextWakeAt names the next', async () => {
    const { store, clock, T0, queue } = await open();
    try {
      const made = await store.create([task(), task({ delayMs: 1000 }), task({ delayMs: 2000, priority: 5 })]);
      const [now, in1, in2] = made.map((m) => m.task.id);
      expect(await claim(store)).toEqual({ ids: [now], wake: T0 + 1000 });
      await expectMarked(db.dataSource, queue);
      expect(await claim(store)).toEqual({ ids: [], wake: T0 + 1000 });
      clock.advance(1000);
      expect(await claim(store)).toEqual({ ids: [in1], wake: T0 + 2000 });
      await expectMarked(db.dataSource, queue);
      clock.advance(999);
      expect(await claim(store)).toEqual({ ids: [], wake: T0 + 2000 });
      clock.advance(1);
      expect(await claim(store)).toEqual({ ids: [in2], wake: null });
    } finally {
      await store.close();
    }
  });

  it('a task left staged by a merge, behind or ahead of another create\'s mark: claimed when due either way', async () => {
    const { store, clock, T0, queue } = await open();
    try {
      // a delayed task of its own create (its mark at T0 + 500), then one create of a task due
      // now and one due at T0 + 1000 (one mark at T0): the claim spends that mark; T0 + 500 covers T0 + 1000
      const [early] = await store.create([task({ delayMs: 500 })]);
      const [due, late] = await store.create([task(), task({ delayMs: 1000 })]);
      // a later mark that covers nothing new: a create at T0 + 3000
      const [latest] = await store.create([task({ delayMs: 3000 })]);
      expect(await claim(store)).toEqual({ ids: [due.task.id], wake: T0 + 500 });
      await expectMarked(db.dataSource, queue);
      clock.advance(500);
      expect(await claim(store)).toEqual({ ids: [early.task.id], wake: T0 + 1000 });
      await expectMarked(db.dataSource, queue);
      clock.advance(500);
      expect(await claim(store)).toEqual({ ids: [late.task.id], wake: T0 + 3000 });
      clock.advance(2000);
      expect(await claim(store)).toEqual({ ids: [latest.task.id], wake: null });
    } finally {
      await store.close();
    }
  });

  it('a task merged into a lane that already holds tasks is read with them by the same claim', async () => {
    const { store } = await open();
    try {
      const old = (await store.create([task(), task(), task()])).map((m) => m.task.id);
      expect((await claim(store, 1)).ids).toEqual([old[0]]); // the lane keeps a head: two tasks merged
      const [hi] = await store.create([task({ priority: 5 })]);
      expect((await claim(store, 1)).ids).toEqual([hi.task.id]);
      expect((await claim(store, 5)).ids).toEqual([old[1], old[2]]);
    } finally {
      await store.close();
    }
  });

  it('hundreds of tasks over many delays and lanes, claimed in small batches as the clock moves: each once, in order of due time then priority', async () => {
    const { store, clock, T0, queue } = await open();
    try {
      const delays = [0, 0, 1, 5, 10, 250, 251, 1000];
      const all: Array<{ id: string; runAt: number; priority: number; seq: number }> = [];
      for (let b = 0; b < 20; b++) {
        const batch = Array.from({ length: 15 }, (_, i) => task({ delayMs: delays[(b * 7 + i * 3) % delays.length], priority: (b + i) % 4, providerKey: `p${i % 5}` }));
        for (const r of await store.create(batch)) all.push({ id: r.task.id, runAt: r.task.runAt, priority: r.task.priority, seq: r.task.seq });
        clock.advance(1);
      }
      const seen: string[] = [];
      for (let step = 0; step < 400 && seen.length < all.length; step++) {
        const now = clock.now();
        const r = await claim(store, 7);
        for (const id of r.ids) {
          const t = all.find((x) => x.id === id)!;
          expect(t.runAt).toBeLessThanOrEqual(now);
          // nothing due and better is left behind
          const better = all.filter((x) => !seen.includes(x.id) && !r.ids.includes(x.id) && x.runAt <= now && x.priority > t.priority);
          expect(better).toEqual([]);
        }
        seen.push(...r.ids);
        await expectMarked(db.dataSource, queue);
        if (r.ids.length < 7) {
          const pending = all.filter((x) => !seen.includes(x.id));
          const next = pending.length ? Math.min(...pending.map((x) => x.runAt)) : null;
          expect(next === null || next > now).toBe(true); // a short batch left nothing due
          expect(r.wake).toBe(next);
          clock.set(Math.max(now + 1, r.wake ?? now + 1));
        }
      }
      expect([...seen].sort()).toEqual(all.map((x) => x.id).sort());
      expect(clock.now()).toBeGreaterThanOrEqual(T0 + 1000);
    } finally {
      await store.close();
    }
  });
});

describe('TypeORM MariaDB claim: the statements of a claim of one task that just became due', () => {
  let db: OpenDatabase;
  beforeAll(async () => {
    db = await openDatabase('mariadb');
  });
  afterAll(async () => {
    await db?.close();
  });

  /**
   * A store on `queue` whose statements sent through a query runner (the store's claims and
   * creates) are recorded in `sent`, whitespace folded; `close` puts the data source back.
   */
  async function recordingStore(queue: string): Promise<{ store: TypeOrmTaskStore; sent: string[]; close: () => Promise<void> }> {
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'stc_', queue });
    await store.init();
    const sent: string[] = [];
    const create = db.dataSource.createQueryRunner.bind(db.dataSource);
    db.dataSource.createQueryRunner = ((...a: Parameters<DataSource['createQueryRunner']>) => {
      const qr = create(...a);
      const query = qr.query.bind(qr);
      qr.query = ((...q: Parameters<typeof qr.query>) => {
        sent.push(String(q[0]).replace(/\s+/g, ' ').trim());
        return query(...q);
      }) as typeof qr.query;
      return qr;
    }) as DataSource['createQueryRunner'];
    const close = async () => {
      db.dataSource.createQueryRunner = create;
      await store.close();
    };
    return { store, sent, close };
  }

  /**
   * Transactions open on the server on other connections than the one asking. A statement of
   * another store running at that instant (a wake poll) is a transaction too, for a moment: the
   * count is read again for up to 2 s, until it is 0. One left open stays open.
   */
  async function openElsewhere(): Promise<number> {
    for (let i = 0; ; i++) {
      const [open] = (await db.dataSource.query('SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id <> CONNECTION_ID()')) as Array<{ n: unknown }>;
      if (Number(open.n) === 0 || i >= 40) return Number(open.n);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('three round trips: no re-mark, no next-wake read, no page read, no UPDATE of the merged row apart from its claim; begin and commit batched', async () => {
    const { store, sent, close } = await recordingStore('latency');
    try {
      await store.claimSubmissions({ owner: 'w', limit: 16, leaseMs: 60_000 }); // the lane row exists after the first task
      await store.create([plainTask({ id: '00000000-0000-4000-8000-000000000001', payload: null })]);
      await store.claimSubmissions({ owner: 'w', limit: 16, leaseMs: 60_000 });
      await store.create([plainTask({ id: '00000000-0000-4000-8000-000000000002', payload: null })]);
      sent.length = 0;
      const r = await store.claimSubmissions({ owner: 'w', limit: 16, leaseMs: 60_000 });
      expect(r.claimed.map((t) => t.id)).toEqual(['00000000-0000-4000-8000-000000000002']);
      expect(r.nextWakeAt).toBeNull();
      const named = (re: RegExp) => sent.filter((s) => re.test(s));
      expect(named(/INSERT INTO \w*stage_marks/)).toEqual([]); // nothing left staged: no mark written
      expect(named(/SELECT \(SELECT MIN\(run_at\) FROM \w*stage_marks/)).toEqual([]); // next wake: from the probe
      expect(named(/UPDATE \w*tasks SET staged = 0/)).toEqual([]); // written by the claim's UPDATE
      expect(named(/SET status = 'SUBMITTING', staged = 0/)).toHaveLength(1);
      expect(named(/SELECT l\.\*, 1 AS pr_joined/)).toEqual([]); // no stored lane was ready: no page read
      expect(named(/^(SET TRANSACTION ISOLATION LEVEL READ COMMITTED|BEGIN|COMMIT)$/)).toEqual([]); // in batches
      // [isolation, START TRANSACTION, lock and clock, probe], [due marks spent, staged rows read], [lanes, claim UPDATE, COMMIT] (was 13)
      expect(sent.length).toBe(3);
      expect(sent[0]).toMatch(/^BEGIN NOT ATOMIC SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION; SELECT @pq_now := .* FOR UPDATE; SELECT p\.\*, @pq_idle := .* FROM \(SELECT EXISTS/);
      expect(sent[1]).toMatch(/^BEGIN NOT ATOMIC DELETE FROM \w*stage_marks .*; SELECT .* FOR UPDATE; END$/);
      expect(sent[2]).toMatch(/^BEGIN NOT ATOMIC INSERT INTO \w*lanes .*; UPDATE \w*tasks SET status = 'SUBMITTING', staged = 0,.*; COMMIT; END$/);
      // nothing left to do: the next claim is one round trip, committed by the block that began it
      sent.length = 0;
      const idle = await store.claimSubmissions({ owner: 'w', limit: 16, leaseMs: 60_000 });
      expect(idle).toEqual({ claimed: [], timedOut: [], nextWakeAt: null });
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/IF @pq_idle = 1 THEN COMMIT; END IF; SELECT @@in_transaction AS pq_open; END$/);
      expect(await openElsewhere()).toBe(0);
    } finally {
      await close();
    }
  });

  it('a small create is one round trip: the server time on every row, the stage mark at the earliest run_at, all or nothing', async () => {
    const { store, sent, close } = await recordingStore('one-shot');
    try {
      const made = await store.create([
        plainTask({ id: '00000000-0000-4000-8000-000000000101', payload: { a: 1 }, delayMs: 700 }),
        plainTask({ id: '00000000-0000-4000-8000-000000000102', payload: null, delayMs: 250, priority: 3 }),
      ]);
      expect(sent).toHaveLength(1);
      const [a, b] = made.map((m) => m.task);
      expect(a.createdAt).toBe(b.createdAt);
      expect([a.runAt - a.createdAt, b.runAt - b.createdAt]).toEqual([700, 250]);
      expect(b.seq).toBeGreaterThan(a.seq);
      const stored = (await db.dataSource.query("SELECT id, seq, created_at, run_at FROM stc_tasks WHERE queue = 'one-shot' ORDER BY seq")) as Array<Record<string, unknown>>;
      expect(stored.map((r) => [String(r.id), Number(r.seq), Number(r.created_at), Number(r.run_at)])).toEqual([
        [a.id, a.seq, a.createdAt, a.runAt],
        [b.id, b.seq, b.createdAt, b.runAt],
      ]);
      const marks = (await db.dataSource.query("SELECT run_at FROM stc_stage_marks WHERE queue = 'one-shot'")) as Array<{ run_at: unknown }>;
      expect(marks.map((m) => Number(m.run_at))).toEqual([b.runAt]);
      // a batch with a taken id fails whole: its other task is not written, no mark is added
      await expect(
        store.create([plainTask({ id: '00000000-0000-4000-8000-000000000103', payload: null }), plainTask({ id: a.id, payload: null })]),
      ).rejects.toThrow();
      expect(await db.dataSource.query("SELECT id FROM stc_tasks WHERE id = '00000000-0000-4000-8000-000000000103'")).toEqual([]);
      expect(await db.dataSource.query("SELECT run_at FROM stc_stage_marks WHERE queue = 'one-shot'")).toHaveLength(1);
      // and nothing is left open on the server (this read's own entry aside)
      expect(await openElsewhere()).toBe(0);
    } finally {
      await close();
    }
  });

  it('on the server clock, completeAndClaim\'s claim sees the slot its complete frees (its probe runs after the completes)', async () => {
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'stc_', queue: 'freed' });
    await store.init();
    try {
      await store.setLimits({ kind: 'provider', providerKey: 'one', accountConcurrency: 1 });
      const [a, b] = await store.create([
        plainTask({ id: '00000000-0000-4000-8000-000000000201', payload: null, providerKey: 'one', accountId: 'acc', priority: 1 }),
        plainTask({ id: '00000000-0000-4000-8000-000000000202', payload: null, providerKey: 'one', accountId: 'acc' }),
      ]);
      const first = await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 60_000 });
      expect(first.claimed.map((t) => t.id)).toEqual([a.task.id]); // b waits for the account's one slot
      const r = await store.completeAndClaim([{ fence: fenceOf(first.claimed[0]), outcome: { status: TaskStatus.SUCCEEDED } }], { owner: 'w', limit: 2, leaseMs: 60_000 });
      expect(r.completed.map((x) => x.task?.status)).toEqual([TaskStatus.SUCCEEDED]);
      expect(r.claim.claimed.map((t) => t.id)).toEqual([b.task.id]);
    } finally {
      await store.close();
    }
  });

  it('a claim that waited for the queue lock sees a task committed while it waited (its probe, batched with the lock, runs after the wait)', async () => {
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'stc_', queue: 'held' });
    await store.init();
    const holder = db.dataSource.createQueryRunner();
    try {
      await holder.query('START TRANSACTION');
      await holder.query("SELECT queue FROM stc_queues WHERE queue = 'held' FOR UPDATE");
      const claiming = store.claimSubmissions({ owner: 'w', limit: 4, leaseMs: 60_000 });
      // wait until the claim's transaction waits for the queue row's lock
      for (let i = 0; i < 500; i++) {
        const [w] = (await db.dataSource.query('SELECT COUNT(*) AS n FROM information_schema.INNODB_LOCK_WAITS')) as Array<{ n: unknown }>;
        if (Number(w.n) > 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      const [made] = await store.create([plainTask({ id: '00000000-0000-4000-8000-000000000301', payload: null })]);
      await holder.query('COMMIT');
      expect((await claiming).claimed.map((t) => t.id)).toEqual([made.task.id]);
    } finally {
      await holder.release();
      await store.close();
    }
  });

  it('on the server clock, claims take what earlier claims left in ready lanes and what is due in between, then find nothing in one round trip', async () => {
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'stc_', queue: 'left' });
    await store.init();
    try {
      const ids = (await store.create(Array.from({ length: 5 }, (_, i) => plainTask({ id: `00000000-0000-4000-8000-00000000040${i}`, payload: null, providerKey: `p${i % 2}` })))).map((m) => m.task.id);
      const got: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 60_000 });
        got.push(...r.claimed.map((t) => t.id));
      }
      expect(got.sort()).toEqual([...ids].sort());
      expect((await store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 60_000 })).claimed).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
