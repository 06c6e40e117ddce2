import { randomUUID } from 'node:crypto';
import type { MigrationInterface } from 'typeorm';
import { fenceOf, ManualClock, TaskStatus, type NewTask } from 'nestjs-priority-queue/core';
import { priorityQueueMigrations, TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { runMigrations } from './run-migrations';
import { openDatabase, type OpenDatabase } from './typeorm-dialects';

// A real MariaDB server; never skipped.
jest.setTimeout(180_000);

const T0 = 1_700_000_000_000;

/**
 * Schema v7 on MariaDB (the step is MySQL / MariaDB only): the key columns move from the PAD
 * SPACE utf8mb4_bin to a NO PAD binary collation on a queue that already has tasks, limits and
 * a slot in use; what was there keeps working (the slot is freed once, the limit still holds),
 * and from then on 'acme' and 'acme ' are two tenants / idempotency keys. `down` goes back.
 */
describe('TypeORM store on mariadb: schema step v7 (keys in a NO PAD collation)', () => {
  let db: OpenDatabase;
  const prefix = 'k7_';
  const migrations = priorityQueueMigrations({ tablePrefix: prefix });
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    db = await openDatabase('mariadb');
  });
  afterAll(async () => {
    await db?.close();
  });

  const run = (classes: Array<new () => MigrationInterface>, direction: 'up' | 'down') => runMigrations(db.dataSource, classes, direction);

  async function openStore(): Promise<TypeOrmTaskStore> {
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: prefix, queue: 'q', migrate: false, clock });
    await store.init();
    return store;
  }

  function newTask(tenantId: string, idempotencyKey: string | null = null): NewTask {
    return { id: randomUUID(), idempotencyKey, type: 't', payload: {}, priority: 0, providerKey: 'p', accountId: null, tenantId, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 3, idempotent: true };
  }

  async function collations(): Promise<Record<string, string>> {
    const rows: Array<{ t: string; c: string; k: string }> = await db.dataSource.query(
      `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLLATION_NAME AS k FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('${prefix}tasks', '${prefix}lanes', '${prefix}resources')
          AND COLUMN_NAME IN ('idempotency_key', 'provider_key', 'account_id', 'tenant_id', 'concurrency_key', 'parked_on', 'rkey')`,
    );
    return Object.fromEntries(rows.map((r) => [`${r.t}.${r.c}`, r.k]));
  }

  it('existing tasks, limits and slots carry over; afterwards keys differing in trailing spaces are distinct; down goes back', async () => {
    const v7 = migrations.findIndex((m) => m.name.startsWith('PriorityQueueSchemaV7'));
    expect(v7).toBe(6);
    await run(migrations.slice(0, v7), 'up');
    expect(new Set(Object.values(await collations()))).toEqual(new Set(['utf8mb4_bin']));
    const v6 = await openStore();
    await v6.setLimits({ kind: 'tenant', tenantId: 'acme', quota: 1 });
    await v6.create([newTask('acme', 'i1'), newTask('acme')]);
    const [held] = (await v6.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 60_000 })).claimed;
    expect(held.tenantId).toBe('acme');

    await run(migrations.slice(v7, v7 + 1), 'up');
    const cols = await collations();
    expect(Object.keys(cols)).toHaveLength(11);
    expect(new Set(Object.values(cols))).toEqual(new Set(['utf8mb4_nopad_bin']));

    const s7 = await openStore();
    expect((await s7.getLimits()).tenants).toEqual({ acme: 1 });
    // 'i1 ' is a new key; 'i1' (same operation as before the step) returns the task it made then
    const created = await s7.create([newTask('acme ', 'i1 '), newTask('acme', 'i1')]);
    expect(created.map((r) => r.created)).toEqual([true, false]);
    expect(created[1].task.id).not.toBe(created[0].task.id);
    // 'acme' is at its quota (the slot taken before the step); 'acme ' has no limit
    const next = (await s7.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 60_000 })).claimed;
    expect(next.map((t) => t.id)).toEqual([created[0].task.id]);
    expect((await s7.stats()).inFlightByTenant).toEqual({ acme: 1, 'acme ': 1 });
    await s7.complete(fenceOf(held), { status: TaskStatus.SUCCEEDED });
    const last = (await s7.claimSubmissions({ owner: 'w', limit: 5, leaseMs: 60_000 })).claimed;
    expect(last.map((t) => t.tenantId)).toEqual(['acme']);
    await s7.complete(fenceOf(last[0]), { status: TaskStatus.SUCCEEDED });
    await s7.complete(fenceOf(next[0]), { status: TaskStatus.SUCCEEDED });
    expect((await s7.stats()).inFlightByTenant).toEqual({});
    await s7.close();

    // down: only possible once no two keys differ in trailing spaces alone (unique indexes)
    await expect(run(migrations.slice(v7, v7 + 1), 'down')).rejects.toThrow(/Duplicate entry/);
    expect(new Set(Object.values(await collations()))).toEqual(new Set(['utf8mb4_nopad_bin']));
    await db.dataSource.query(`DELETE FROM ${prefix}tasks WHERE tenant_id = 'acme '`);
    await db.dataSource.query(`DELETE FROM ${prefix}lanes WHERE tenant_id = 'acme '`);
    await db.dataSource.query(`DELETE FROM ${prefix}resources WHERE rkey = 't:acme '`);
    await run(migrations.slice(v7, v7 + 1), 'down');
    expect(new Set(Object.values(await collations()))).toEqual(new Set(['utf8mb4_bin']));
    await v6.close();
  });
});
