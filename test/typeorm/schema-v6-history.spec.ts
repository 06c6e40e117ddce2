import { randomUUID } from 'node:crypto';
import type { MigrationInterface } from 'typeorm';
import { fenceOf, ManualClock, TaskStatus, type NewTask } from 'nestjs-priority-queue/core';
import { priorityQueueMigrations, TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { runMigrations } from './run-migrations';
import { openDatabase, type DialectName, type OpenDatabase } from './typeorm-dialects';

// Real PostgreSQL and MariaDB servers and a SQLite file; never skipped.
jest.setTimeout(180_000);

const T0 = 1_700_000_000_000;

/**
 * Schema v6 (per-task history: two columns and a trigger) on a queue that already has tasks:
 * tasks created before the step keep no history (history_limit 0) and go on working; tasks
 * created after it record every transition; the step's `down` drops it all and a store on v5
 * keeps working without history.
 */
describe.each(['postgres', 'mariadb', 'sqlite'] as DialectName[])('TypeORM store on %s: schema step v6 (history)', (dialect) => {
  let db: OpenDatabase;
  const prefix = `h6${dialect.slice(0, 2)}_`;
  const migrations = priorityQueueMigrations({ tablePrefix: prefix });
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    db = await openDatabase(dialect);
  });
  afterAll(async () => {
    await db?.close();
  });

  const run = (classes: Array<new () => MigrationInterface>, direction: 'up' | 'down') => runMigrations(db.dataSource, classes, direction);

  async function openStore(): Promise<TypeOrmTaskStore> {
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: prefix, queue: 'q', migrate: false, clock, historyLimit: 5 });
    await store.init();
    return store;
  }

  function newTask(priority: number): NewTask {
    return { id: randomUUID(), idempotencyKey: null, type: 't', payload: { priority }, priority, providerKey: 'p', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 3, idempotent: true };
  }

  it('old tasks keep none, new tasks record their transitions, down removes it', async () => {
    const v6 = migrations.findIndex((m) => m.name.startsWith('PriorityQueueSchemaV6'));
    expect(v6).toBe(5);
    await run(migrations.slice(0, v6), 'up');
    const v5 = await openStore();
    const [old] = (await v5.create([newTask(1)])).map((r) => r.task);
    expect(await v5.history(old.id)).toEqual([]);

    await run(migrations.slice(v6, v6 + 1), 'up');
    const s6 = await openStore();
    const [fresh] = (await s6.create([newTask(2)])).map((r) => r.task);
    clock.advance(10);
    const claimed = (await s6.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 1000 })).claimed;
    expect(claimed.map((t) => t.id)).toEqual([fresh.id, old.id]);
    clock.advance(10);
    for (const c of claimed) await s6.complete(fenceOf(c), { status: TaskStatus.FAILED, error: 'e,1' });
    expect(await s6.history(old.id)).toEqual([]);
    expect(await s6.history(fresh.id)).toEqual([
      { at: T0, from: null, to: TaskStatus.PENDING_SUBMIT, version: 1 },
      { at: T0 + 10, from: TaskStatus.PENDING_SUBMIT, to: TaskStatus.SUBMITTING, version: 2 },
      { at: T0 + 20, from: TaskStatus.SUBMITTING, to: TaskStatus.FAILED, version: 3, error: 'e,1' },
    ]);
    // retry of both: the old task stays without history, the new one gets the transition
    await s6.requeue(old.id);
    await s6.requeue(fresh.id);
    expect(await s6.history(old.id)).toEqual([]);
    expect((await s6.history(fresh.id)).map((e) => e.to)).toEqual([TaskStatus.PENDING_SUBMIT, TaskStatus.SUBMITTING, TaskStatus.FAILED, TaskStatus.PENDING_SUBMIT]);
    await s6.close();

    await run(migrations.slice(v6, v6 + 1), 'down');
    const back = await openStore();
    expect(await back.history(fresh.id)).toEqual([]);
    const [later] = (await back.create([newTask(3)])).map((r) => r.task);
    const again = (await back.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 1000 })).claimed;
    expect(again.map((t) => t.id)).toEqual([later.id, fresh.id, old.id]);
    await back.close();
    await v5.close();
  });
});
