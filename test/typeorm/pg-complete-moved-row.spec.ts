import { DataSource } from 'typeorm';
import { fenceOf, TaskStatus, type NewTask } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { dataSourceOptions, openDatabase, type OpenDatabase } from './typeorm-dialects';
import { plainTask } from '../support/new-task';

// A real PostgreSQL 15 server; never skipped. ~2 s.
jest.setTimeout(60_000);

/**
 * complete_leased finds a task this store claimed by the row's cached ctid. Any update of the row
 * since the claim that keeps its fence (the claim function's own re-keying, VACUUM FULL, a
 * trigger) writes a new tuple, so the ctid finds nothing. Such a complete must still be written
 * inside complete_and_claim, BEFORE its claim: the claim has to see the slots it frees. (It used
 * to be written again alone after the call: the claim missed the freed tenant quota and key
 * slot; found by the PostgreSQL model test, seed 1195058083.) Here the rows are moved by a
 * no-op UPDATE of each claimed row, the same version and lease.
 */
const task = (id: string, extra: Partial<NewTask>): NewTask => plainTask({ id, payload: { id }, maxAttempts: 3, ...extra });

describe('TypeORM store on PostgreSQL: completeAndClaim with completes whose rows moved since the claim', () => {
  let db: OpenDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await openDatabase('postgres');
    ds = new DataSource(dataSourceOptions('postgres', db.server!) as never);
    await ds.initialize();
  });

  afterAll(async () => {
    await ds?.destroy().catch(() => undefined);
    await db?.close();
  });

  it('the moved completes free their tenant quota and key slot for the claim of the same call', async () => {
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'mv_', queue: 'moved' });
    await store.init();
    await store.setLimits({ kind: 'tenant', tenantId: 't', quota: 1 });
    await store.setLimits({ kind: 'concurrencyKey', key: 'k', limit: 1 });
    await store.create([
      task('t1', { tenantId: 't', priority: 9 }),
      task('k1', { concurrencyKey: 'k', priority: 8 }),
      task('t2', { tenantId: 't', priority: 7 }),
      task('k2', { concurrencyKey: 'k', priority: 6 }),
      task('free', { priority: -5 }),
    ]);
    const held = (await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 60_000 })).claimed;
    expect(held.map((t) => t.id).sort()).toEqual(['k1', 't1']);
    // move each claimed row to a new tuple; fence (lease id, version) unchanged
    await ds.query(`UPDATE mv_tasks SET id = id WHERE queue = 'moved' AND id IN ('t1', 'k1')`);
    const r = await store.completeAndClaim!(
      held.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED, result: t.id } })),
      { owner: 'w', limit: 2, leaseMs: 60_000 },
    );
    expect(r.completed.map((a) => a.task?.status)).toEqual([TaskStatus.SUCCEEDED, TaskStatus.SUCCEEDED]);
    expect(r.claim.claimed.map((t) => t.id).sort()).toEqual(['k2', 't2']);
    // each complete written once: one terminal version, the result kept
    for (const t of held) {
      const now = (await store.get(t.id))!;
      expect([now.status, now.version, now.result]).toEqual([TaskStatus.SUCCEEDED, t.version + 1, t.id]);
    }
  });
});
