import { DataSource } from 'typeorm';
import { ValidationError } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';

// The options the TypeORM store checks when it is made, before any query.
describe('TypeOrmTaskStore options', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await ds.initialize();
  });
  afterAll(() => ds.destroy());

  it.each<[string, unknown]>([
    ['empty', ''],
    ['65 characters', 'q'.repeat(65)],
    ['a control character', 'a\u0001b'],
    ['DEL', 'a\u007f'],
    ['a lone surrogate', 'q\ud800'],
    ['a number', 7],
  ])('refuses a queue name that is %s with a ValidationError', (_what, queue) => {
    expect(() => new TypeOrmTaskStore({ dataSource: ds, queue: queue as string })).toThrow(ValidationError);
    expect(() => new TypeOrmTaskStore({ dataSource: ds, queue: queue as string })).toThrow(/^Invalid queue .*: use a string of 1 to 64 characters/);
  });

  it('keeps queues of 64 characters and of astral characters apart', async () => {
    const names = ['q'.repeat(64), '😀'.repeat(32), '😁'.repeat(32)];
    const ids: string[] = [];
    for (const queue of names) {
      const store = new TypeOrmTaskStore({ dataSource: ds, queue });
      await store.init();
      const [r] = await store.create([
        { id: `task-${ids.length}`, idempotencyKey: null, type: 't', payload: null, priority: 0, providerKey: 'p', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 1, idempotent: true },
      ]);
      ids.push(r.task.id);
      await store.close();
    }
    for (const [k, queue] of names.entries()) {
      const store = new TypeOrmTaskStore({ dataSource: ds, queue });
      await store.init();
      expect((await store.stats()).byStatus.PENDING_SUBMIT).toBe(1);
      for (const [j, id] of ids.entries()) expect((await store.get(id)) !== null).toBe(j === k);
      await store.close();
    }
  });
});
