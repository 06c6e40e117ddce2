import { ManualClock, TaskStatus, fenceOf, type NewTask } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { openDatabase, type DialectName, type OpenDatabase } from './typeorm-dialects';

/**
 * Claim step 2 (sql/apply-releases.ts, and `releasesAndRate` of the PostgreSQL claim function)
 * reads the `releases` table 10,000 rows per statement. A claim must apply ALL of them: a
 * release left for a later claim keeps a lane parked that may give this claim its task (the
 * head-of-line blocking of DESIGN §3 in another shape).
 *
 * 10,001 real finishes cost 10-20 s on a SQL store, so 10,000 rows are written straight into
 * `releases` for a lane whose counters they cannot push below zero (GREATEST(0, ...)), ahead of
 * the real release of the parked lane's holder. SQLite runs the generic path (the one MySQL /
 * MariaDB run too), PostgreSQL its claim function.
 */
const SQLITE_AND_POSTGRES: DialectName[] = ['sqlite', 'postgres'];

describe.each(SQLITE_AND_POSTGRES)('TypeORM claim on %s: every release row is applied, however many', (name) => {
  let db: OpenDatabase;
  beforeAll(async () => {
    db = await openDatabase(name);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('10,000 release rows ahead of the one that frees a parked lane: the next claim takes the lane\'s task', async () => {
    const clock = new ManualClock();
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: 'rl_', queue: 'releases', clock });
    await store.init();
    try {
      await store.setLimits({ kind: 'provider', providerKey: 'one', accountConcurrency: 1 });
      let seq = 0;
      const task = (over: Partial<NewTask>): NewTask => ({
        id: `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`, idempotencyKey: null, type: 'job', payload: null,
        priority: 0, providerKey: 'p', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null,
        maxAttempts: 3, idempotent: true, ...over,
      });
      const claim = async (limit: number) => (await store.claimSubmissions({ owner: 'w', limit, leaseMs: 60_000 })).claimed;
      // a lane holding a slot (account 'a'), claimed: its lane row exists
      const [other] = await store.create([task({ providerKey: 'bulk', accountId: 'a' })]);
      expect((await claim(1)).map((t) => t.id)).toEqual([other.task.id]);
      // the parked lane: account 'b' full with its holder, the target waits behind it
      const [holder, target] = await store.create([task({ providerKey: 'one', accountId: 'b', priority: 1 }), task({ providerKey: 'one', accountId: 'b' })]);
      const [held] = await claim(1);
      expect(held.id).toBe(holder.task.id);
      expect(await claim(1)).toEqual([]); // parks the lane of 'b'
      // 10,000 releases of the other lane, then the holder's own
      const [row] = (await db.dataSource.query(`SELECT lane_key FROM rl_tasks WHERE id = '${other.task.id}'`)) as Array<{ lane_key: string }>;
      expect(row.lane_key).toMatch(/^[\w:.+/=-]+$/);
      for (let i = 0; i < 10_000; i += 500) {
        const values = Array.from({ length: 500 }, () => `('releases', '${row.lane_key}')`).join(', ');
        await db.dataSource.query(`INSERT INTO rl_releases (queue, lane_key) VALUES ${values}`);
      }
      await store.complete(fenceOf(held), { status: TaskStatus.SUCCEEDED });
      expect((await claim(1)).map((t) => t.id)).toEqual([target.task.id]);
      const [{ n }] = (await db.dataSource.query(`SELECT COUNT(*) AS n FROM rl_releases`)) as Array<{ n: unknown }>;
      expect(Number(n)).toBe(0);
    } finally {
      await store.close();
    }
  });
});
