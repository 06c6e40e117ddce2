import { randomUUID } from 'node:crypto';
import type { MigrationInterface } from 'typeorm';
import { ALL_STATUSES, fenceOf, TaskStatus, type NewTask, type Task } from 'nestjs-priority-queue/core/task';
import { priorityQueueMigrations, TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { runMigrations } from './run-migrations';
import { openDatabase, type OpenDatabase } from './typeorm-dialects';

// A real PostgreSQL 15 server; never skipped.
jest.setTimeout(120_000);

/**
 * Schema v4 (PostgreSQL): the status index leaves PENDING_SUBMIT and SUBMITTING out; list() and
 * stats() read those through the lane / staged / lease indexes. A queue filled under v3 must
 * list and count exactly the same after the v4 step, and after its `down`.
 */
describe('TypeORM store on PostgreSQL: schema steps v4 (status index without the pending and claimed rows) and v5 (primary key on id)', () => {
  let db: OpenDatabase;
  const prefix = 'mig4_';
  const migrations = priorityQueueMigrations({ tablePrefix: prefix });

  beforeAll(async () => {
    db = await openDatabase('postgres');
  });
  afterAll(async () => {
    await db?.close();
  });

  const run = (classes: Array<new () => MigrationInterface>, direction: 'up' | 'down') => runMigrations(db.dataSource, classes, direction);

  async function openStore(): Promise<TypeOrmTaskStore> {
    const store = new TypeOrmTaskStore({ dataSource: db.dataSource, tablePrefix: prefix, queue: 'q', migrate: false });
    await store.init();
    return store;
  }

  function newTask(priority: number, delayMs = 0): NewTask {
    return {
      id: randomUUID(),
      idempotencyKey: null,
      type: 't',
      payload: { priority },
      priority,
      providerKey: 'p',
      accountId: priority % 2 === 0 ? 'acc' : null,
      tenantId: null,
      concurrencyKey: null,
      delayMs,
      timeoutMs: null,
      maxAttempts: 3,
      idempotent: true,
    };
  }

  /** Every status: all ids through list() (small pages), plus stats(). */
  async function snapshot(store: TypeOrmTaskStore) {
    const lists: Record<string, string[]> = {};
    for (const status of ALL_STATUSES) {
      const ids: string[] = [];
      let after: number | undefined;
      for (;;) {
        const page: Task[] = await store.list({ status, limit: 3, afterSeq: after });
        for (const t of page) expect(t.status).toBe(status);
        ids.push(...page.map((t) => t.id));
        if (page.length < 3) break;
        after = page[page.length - 1].seq;
      }
      lists[status] = ids;
    }
    const s = await store.stats();
    return { lists, byStatus: s.byStatus, pending: s.pending.map((p) => [p.priority, p.count]), inFlight: s.inFlightByProvider, accounts: s.inFlightByAccount };
  }

  async function indexes(): Promise<string[]> {
    const rows: Array<{ indexname: string }> = await db.dataSource.query(`SELECT indexname FROM pg_indexes WHERE tablename = '${prefix}tasks'`);
    return rows.map((r) => r.indexname).sort();
  }

  it('lists and counts a queue filled under v3 the same after v4 and after its down', async () => {
    await run(migrations.slice(0, 3), 'up');
    const v3 = await openStore();
    await v3.create([...Array.from({ length: 14 }, (_, i) => newTask(i % 4)), ...Array.from({ length: 4 }, (_, i) => newTask(i, 3_600_000))]);
    const { claimed } = await v3.claimSubmissions({ owner: 'w', limit: 9, leaseMs: 60_000 });
    expect(claimed).toHaveLength(9);
    await v3.complete(fenceOf(claimed[0]), { status: TaskStatus.SUCCEEDED, result: { ok: 1 } });
    await v3.complete(fenceOf(claimed[1]), { status: TaskStatus.FAILED, error: 'no' });
    await v3.markSubmitted(fenceOf(claimed[2]), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 60_000 });
    await v3.markSubmitted(fenceOf(claimed[3]), { externalId: 'y', status: TaskStatus.RUNNING, pollDelayMs: 60_000 });
    const before = await snapshot(v3);
    expect(before.byStatus).toMatchObject({ PENDING_SUBMIT: 9, SUBMITTING: 5, SUBMITTED: 1, RUNNING: 1, SUCCEEDED: 1, FAILED: 1 });
    expect(before.lists.PENDING_SUBMIT).toHaveLength(9);
    await v3.close();

    await run(migrations.slice(3, 4), 'up');
    expect(await indexes()).toEqual(expect.arrayContaining([`${prefix}tasks_status_rest`, `${prefix}tasks_submitting_nolease`]));
    expect(await indexes()).not.toContain(`${prefix}tasks_status`);
    const v4 = await openStore();
    expect(await snapshot(v4)).toEqual(before);

    // work under v4: a claim and a complete, then the same answers after going back to v3
    const more = await v4.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 60_000 });
    expect(more.claimed).toHaveLength(2);
    await v4.complete(fenceOf(more.claimed[0]), { status: TaskStatus.CANCELED });
    const after = await snapshot(v4);
    expect(after.byStatus).toMatchObject({ PENDING_SUBMIT: 7, SUBMITTING: 6, CANCELED: 1 });
    await v4.close();

    await run(migrations.slice(3, 4), 'down');
    expect(await indexes()).toContain(`${prefix}tasks_status`);
    expect(await indexes()).not.toContain(`${prefix}tasks_status_rest`);
    const back = await openStore();
    expect(await snapshot(back)).toEqual(after);
    await back.close();
  });

  it('v5 moves the primary key to id; cancel, changePriority, recovery and purge find their rows; down restores it', async () => {
    await run(migrations.slice(3, 5), 'up');
    const pkey = async () =>
      (
        (await db.dataSource.query(
          `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
            WHERE i.indrelid = '${prefix}tasks'::regclass AND i.indisprimary`,
        )) as Array<{ attname: string }>
      ).map((r) => r.attname);
    expect(await pkey()).toEqual(['id']);
    expect(await indexes()).not.toContain(`${prefix}tasks_id`);
    const v5 = await openStore();
    const before = await snapshot(v5);
    expect(before.byStatus.PENDING_SUBMIT).toBe(7);

    const [pending1, pending2] = await v5.list({ status: TaskStatus.PENDING_SUBMIT, limit: 2 });
    expect((await v5.cancel(pending1.id))!.status).toBe(TaskStatus.CANCELED);
    expect((await v5.changePriority(pending2.id, 99)).priority).toBe(99);
    const lost = await v5.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 1 });
    expect(lost.claimed.map((t) => t.id)).toEqual([pending2.id]);
    await new Promise((r) => setTimeout(r, 20));
    const recovered = await v5.recoverExpired(10);
    expect(recovered.map((x) => [x.task.id, x.to])).toEqual([[pending2.id, TaskStatus.PENDING_SUBMIT]]);
    expect((await v5.get(pending2.id))!.attempts).toBe(1);
    const purged = await v5.purge((await v5.now()) + 60_000, 100);
    expect(purged).toBe(before.byStatus.SUCCEEDED + before.byStatus.FAILED + before.byStatus.CANCELED + 1);
    expect(await v5.get(pending1.id)).toBeNull();
    const after = await snapshot(v5);
    await v5.close();

    await run(migrations.slice(4, 5), 'down');
    expect(await pkey()).toEqual(['seq']);
    expect(await indexes()).toContain(`${prefix}tasks_id`);
    const back = await openStore();
    expect(await snapshot(back)).toEqual(after);
    await back.close();
  });
});
