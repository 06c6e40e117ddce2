import { TaskStatus, type TaskStore } from 'nestjs-priority-queue';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { openDatabase, type OpenDatabase } from './typeorm-dialects';

/**
 * Several queues on one SQLite DataSource (named queues of one app): their stores share the
 * DataSource's single connection, so their transactions must not interleave.
 */
describe('TypeORM store: several queues on one SQLite DataSource', () => {
  let db: OpenDatabase;

  beforeAll(async () => {
    db = await openDatabase('sqlite');
  });

  afterAll(async () => {
    await db?.close();
  });

  it('runs creates, claims and completes of 4 queues at once without "cannot start a transaction within a transaction"', async () => {
    const stores: TaskStore[] = ['a', 'b', 'c', 'd'].map((queue) => new TypeOrmTaskStore({ dataSource: db.dataSource, queue }));
    await Promise.all(stores.map((s) => s.init()));
    const perQueue = 150;
    await Promise.all(
      stores.map(async (s, q) => {
        const made = await Promise.all(
          Array.from({ length: perQueue }, (_, i) =>
            s.create([
              {
                id: `${q}-${i}`,
                idempotencyKey: null,
                type: 't',
                payload: { i },
                priority: i % 7,
                providerKey: `p${i % 5}`,
                accountId: null,
                tenantId: null,
                concurrencyKey: null,
                delayMs: 0,
                timeoutMs: null,
                maxAttempts: 3,
                idempotent: true,
              },
            ]),
          ),
        );
        expect(made).toHaveLength(perQueue);
        let done = 0;
        while (done < perQueue) {
          const { claimed } = await s.claimSubmissions({ owner: `w${q}`, limit: 20, leaseMs: 30_000 });
          await Promise.all(claimed.map((t) => s.complete({ id: t.id, leaseId: t.leaseId!, version: t.version }, { status: TaskStatus.SUCCEEDED, result: q })));
          done += claimed.length;
          if (claimed.length === 0) throw new Error(`queue ${q}: nothing to claim after ${done}`);
        }
      }),
    );
    for (const s of stores) expect((await s.stats()).byStatus.SUCCEEDED).toBe(perQueue);
    await Promise.all(stores.map((s) => s.close()));
  });
});
