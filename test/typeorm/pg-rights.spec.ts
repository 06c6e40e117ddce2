import { DataSource } from 'typeorm';
import { ConfigurationError, fenceOf, ManualClock, TaskStatus, type NewTask } from '../../libs/priority-queue/src/core';
import { priorityQueueMigrations, TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { runMigrations } from './run-migrations';
import { startPostgresServer, type SqlServerHandle } from '../support/servers/postgres-server';

// A real PostgreSQL 15 server; never skipped.
jest.setTimeout(180_000);

/**
 * The database rights docs/TYPEORM.md ("Rights") says the schema needs, and no more: a role that
 * may only create objects in one schema runs the migration, and grants an application role the
 * runtime rights the doc lists (the GRANT statements below are the doc's); the store, run by the
 * application role, does every kind of write and read. Neither role is a
 * superuser or owns the database. The application role starts with migrate: true (the default):
 * on a current schema init() runs no DDL.
 */
describe('TypeORM store on PostgreSQL: the documented database rights', () => {
  let server: SqlServerHandle;
  const opened: DataSource[] = [];
  const prefix = 'pq_';
  const clock = new ManualClock(1_700_000_000_000);

  async function open(user: string, password: string): Promise<DataSource> {
    const ds = new DataSource({
      type: 'postgres',
      host: server.host,
      port: server.port,
      username: user,
      password,
      database: server.database,
      extra: { max: 4, options: '-c search_path=jobs' },
    });
    await ds.initialize();
    opened.push(ds);
    return ds;
  }

  beforeAll(async () => {
    server = await startPostgresServer();
    const admin = new DataSource({ type: 'postgres', url: server.url });
    await admin.initialize();
    for (const sql of [
      `CREATE SCHEMA jobs`,
      `CREATE ROLE pq_migrator LOGIN PASSWORD 'migrator'`,
      `GRANT USAGE, CREATE ON SCHEMA jobs TO pq_migrator`,
      `CREATE ROLE pq_app LOGIN PASSWORD 'app'`,
      `GRANT USAGE ON SCHEMA jobs TO pq_app`,
    ]) {
      await admin.query(sql);
    }
    await admin.destroy();
  });

  afterAll(async () => {
    for (const ds of opened) await ds.destroy().catch(() => undefined);
    await server?.stop();
  });

  function newTask(id: string, priority: number): NewTask {
    return { id, idempotencyKey: null, type: 't', payload: { id }, priority, providerKey: 'p', accountId: 'acc', tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 3, idempotent: true };
  }

  it('a schema-only role migrates; an application role with the documented grants runs the queue', async () => {
    const migrator = await open('pq_migrator', 'migrator');
    await runMigrations(migrator, priorityQueueMigrations({ tablePrefix: prefix }), 'up');
    // docs/TYPEORM.md, "Rights", PostgreSQL: the application role's grants
    for (const sql of [
      `GRANT SELECT, INSERT, UPDATE, DELETE ON pq_tasks, pq_lanes, pq_resources, pq_releases, pq_lane_marks, pq_queues, pq_sweeps, pq_fair_levels, pq_fair_tags, pq_tenant_weights, pq_schema_version TO pq_app`,
      `GRANT USAGE ON SEQUENCE pq_tasks_seq_seq, pq_releases_id_seq, pq_lane_marks_id_seq TO pq_app`,
    ]) {
      await migrator.query(sql);
    }

    const app = await open('pq_app', 'app');
    // migrate: true (the default) on a current schema only reads its version: no DDL
    const store = new TypeOrmTaskStore({ dataSource: app, tablePrefix: prefix, queue: 'q', clock, historyLimit: 10 });
    await store.init();
    const noMigrate = new TypeOrmTaskStore({ dataSource: app, tablePrefix: prefix, queue: 'q2', migrate: false });
    await noMigrate.init();
    await noMigrate.close();
    await store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'acc', concurrency: 2 });
    await store.create([newTask('a', 1), newTask('b', 3), newTask('c', 2)]);
    const first = await store.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 60_000 });
    expect(first.claimed.map((t) => t.id)).toEqual(['b', 'c']); // account limit 2
    const b = await store.markSubmitted(fenceOf(first.claimed[0]), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
    const [polled] = await store.claimPolls({ owner: 'w', limit: 10, leaseMs: 60_000 });
    expect(polled.id).toBe(b.id);
    await store.complete(fenceOf(polled), { status: TaskStatus.SUCCEEDED, result: 1 });
    await store.complete(fenceOf(first.claimed[1]), { status: TaskStatus.FAILED, error: 'no' });
    const second = await store.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 60_000 });
    expect(second.claimed.map((t) => t.id)).toEqual(['a']); // the releases applied by the claim
    await store.requeue('c');
    expect((await store.cancel('c'))?.status).toBe(TaskStatus.CANCELED);
    expect((await store.history('b')).map((e) => e.to)).toEqual([TaskStatus.PENDING_SUBMIT, TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.SUCCEEDED]);
    expect((await store.stats()).byStatus[TaskStatus.SUBMITTING]).toBe(1);
    clock.advance(1000);
    expect(await store.purge(clock.now(), 100)).toBe(2);
    await store.close();

    // DESIGN §7 on the same grants: fair tags (fair_tag(), fair_tags, fair_levels), a tenant
    // weight (tenant_weights), a deadline boost fired by the claim
    const fair = new TypeOrmTaskStore({ dataSource: app, tablePrefix: prefix, queue: 'qf', clock, fairness: 'tenant' });
    await fair.init();
    await fair.setLimits({ kind: 'tenantWeight', tenantId: 'heavy', weight: 2 });
    const made = await fair.create([
      { ...newTask('f1', 0), tenantId: 'heavy' },
      { ...newTask('f2', 0), tenantId: 'heavy', timeoutMs: 10_000, boost: { beforeDeadlineMs: 9_000, priority: 4 } },
    ]);
    expect(made.map((r) => r.task.fairTag)).toEqual(['500000', '1000000']);
    clock.advance(1000);
    const fc = await fair.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 60_000 });
    expect(fc.boosted?.map((b) => [b.task.id, b.fromPriority, b.task.priority, b.task.fairTag])).toEqual([['f2', 0, 4, '500000']]);
    expect(fc.claimed.map((t) => t.id)).toEqual(['f2']);
    await fair.close();

    // on a prefix not migrated yet the application role cannot create the schema (migrate:
    // true fails on the first DDL statement), and with migrate: false init() says what to run
    await expect(new TypeOrmTaskStore({ dataSource: app, tablePrefix: 'other_', queue: 'q' }).init()).rejects.toThrow(/permission denied for schema jobs/);
    await expect(new TypeOrmTaskStore({ dataSource: app, tablePrefix: 'other_', queue: 'q', migrate: false }).init()).rejects.toBeInstanceOf(ConfigurationError);
  });
});
