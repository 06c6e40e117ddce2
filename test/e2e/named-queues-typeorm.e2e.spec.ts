import { DataSource } from 'typeorm';
import { ConfigurationError, TaskStatus, ValidationError } from 'nestjs-priority-queue';
import { TypeOrmTaskStore, typeormStore } from 'nestjs-priority-queue/typeorm';
import { openDatabase, type OpenDatabase } from '../typeorm/typeorm-dialects';
import { createQueuesApp, eventually, EventRecorder, historiesAfterOneTask, PdfHandler, Producer } from './support/queues-app';

describe('named queues on TypeORM: cross-process events (e2e, real PostgreSQL; SQLite)', () => {
  let pg: OpenDatabase;

  beforeAll(async () => {
    pg = await openDatabase('postgres');
  }, 120_000);

  afterAll(async () => {
    await pg?.close();
  });

  it('PostgreSQL: an app on its own DataSource sees the transitions another app makes (LISTEN/NOTIFY), and waitFor ends on them', async () => {
    const other = new DataSource(pg.options as never);
    await other.initialize();
    const producer = await createQueuesApp({ store: typeormStore({ dataSource: pg.dataSource, tablePrefix: 'nq_' }), root: { workers: { enabled: false } } });
    const worker = await createQueuesApp({ store: typeormStore({ dataSource: other, tablePrefix: 'nq_' }) });
    try {
      const p = producer.get(Producer);
      const tasks = await p.reports.submitMany(Array.from({ length: 200 }, (_, i) => ({ type: 'pdf', payload: { id: `pg${i}` } })));
      // pollMs far beyond the timeout: only the worker's NOTIFY can end these waits
      const done = await Promise.all(tasks.map((t) => p.reports.waitFor(t.id, { timeoutMs: 30_000, pollMs: 600_000 })));
      expect(done.every((t) => t.status === TaskStatus.SUCCEEDED)).toBe(true);
      expect(producer.get(PdfHandler).ran).toEqual([]);
      await eventually(() => producer.get(EventRecorder).clusterReports.filter((e) => e.to === TaskStatus.SUCCEEDED).length === 200, '200 SUCCEEDED events');
      // order holds per publishing process only: the worker's two, the producer's `created` anywhere
      const mine = producer.get(EventRecorder).clusterReports.filter((e) => e.taskId === tasks[0].id).map((e) => e.name);
      expect([...mine].sort()).toEqual(['created', 'submitting', 'succeeded']);
      expect(mine.filter((n) => n !== 'created')).toEqual(['submitting', 'succeeded']);
    } finally {
      await producer.close();
      await worker.close();
      await other.destroy();
    }
    expect(pg.dataSource.isInitialized).toBe(true); // the app's DataSource stays open
  });

  it('SQLite: events reach apps on the same DataSource (in-process); an app on another DataSource still gets waitFor through its polls', async () => {
    const db = await openDatabase('sqlite');
    const other = new DataSource(db.options as never);
    await other.initialize();
    const shared = typeormStore({ dataSource: db.dataSource });
    const producer = await createQueuesApp({ store: shared, root: { workers: { enabled: false } } });
    const worker = await createQueuesApp({ store: shared });
    const elsewhere = await createQueuesApp({ store: typeormStore({ dataSource: other }), root: { workers: { enabled: false } } });
    try {
      const t = await producer.get(Producer).reports.submit({ type: 'pdf', payload: { id: 'lite' } });
      expect((await producer.get(Producer).reports.waitFor(t.id, { timeoutMs: 30_000, pollMs: 600_000 })).status).toBe(TaskStatus.SUCCEEDED);
      expect((await elsewhere.get(Producer).reports.waitFor(t.id, { timeoutMs: 30_000, pollMs: 20 })).status).toBe(TaskStatus.SUCCEEDED);
      expect(elsewhere.get(EventRecorder).clusterReports).toEqual([]); // no notification channel between DataSources
    } finally {
      await producer.close();
      await worker.close();
      await elsewhere.close();
      await other.destroy();
      await db.close();
    }
  });

  it("passes typeormStore's historyLimit to every queue's store (default 20); a bad one is refused at the call", async () => {
    const db = await openDatabase('sqlite');
    const on = await createQueuesApp({ store: typeormStore({ dataSource: db.dataSource, tablePrefix: 'h1_' }) });
    const short = await createQueuesApp({ store: typeormStore({ dataSource: db.dataSource, tablePrefix: 'h2_', historyLimit: 1 }) });
    try {
      expect(await historiesAfterOneTask(on)).toEqual({ reports: ['PENDING_SUBMIT', 'SUBMITTING', 'SUCCEEDED'], mail: ['PENDING_SUBMIT', 'SUBMITTING', 'SUCCEEDED'] });
      expect(await historiesAfterOneTask(short)).toEqual({ reports: ['SUCCEEDED'], mail: ['SUCCEEDED'] });
    } finally {
      await on.close();
      await short.close();
      await db.close();
    }
    expect(() => typeormStore({ dataSource: pg.dataSource, historyLimit: 1001 })).toThrow(ValidationError);
  });

  it('explains a wrong dataSource with a clear error', () => {
    expect(() => typeormStore({ dataSource: 'postgres://x' } as never)).toThrow(ConfigurationError);
    expect(() => typeormStore({ dataSource: { type: 'postgres', url: 'postgres://x' } } as never)).toThrow(/got DataSource options: create it with new DataSource\(options\)/);
    expect(() => typeormStore('postgres://x' as never)).toThrow(/typeormStore\(\) got the string "postgres:\/\/x".*use typeormStore\(\{ dataSource/);
    expect(() => new TypeOrmTaskStore({ dataSource: undefined as never })).toThrow(/TypeOrmTaskStore\(\{ dataSource \}\) must be a TypeORM DataSource/);
  });
});
