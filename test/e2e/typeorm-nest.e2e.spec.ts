import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { PriorityQueueModule, PriorityTask, TaskManager, TaskStatus, type HandlerContext } from 'nestjs-priority-queue';

@PriorityTask('sum')
class SumHandler {
  run({ payload }: HandlerContext<{ a: number; b: number }>) {
    return payload.a + payload.b;
  }
}

@Module({ providers: [SumHandler] })
class HandlersModule {}

describe('PriorityQueueModule on the DataSource of @nestjs/typeorm (SQLite file)', () => {
  let dir: string;
  let moduleRef: TestingModule;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pq-nest-typeorm-'));
    moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'app.sqlite') }),
        PriorityQueueModule.forRootAsync({
          inject: [DataSource],
          useFactory: (dataSource: DataSource) => ({
            store: { type: 'typeorm', dataSource, tablePrefix: 'pq_' },
            workers: { idlePollMs: 20 },
          }),
        }),
        HandlersModule,
      ],
    }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates its tables through migrations in the app DataSource and runs tasks', async () => {
    const tasks = moduleRef.get(TaskManager);
    const t = await tasks.submit({ type: 'sum', payload: { a: 2, b: 3 } });
    const deadline = Date.now() + 10_000;
    let cur = await tasks.get(t.id);
    while (cur?.status !== TaskStatus.SUCCEEDED && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      cur = await tasks.get(t.id);
    }
    expect(cur).toMatchObject({ status: TaskStatus.SUCCEEDED, result: 5 });
    const ds = moduleRef.get(DataSource);
    const tables = (await ds.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'pq_%'`)) as Array<{ name: string }>;
    expect(tables.map((r) => r.name)).toEqual(expect.arrayContaining(['pq_tasks']));
  });

  it('a store closed by the library leaves the app DataSource open', async () => {
    const ds = moduleRef.get(DataSource);
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'pq_', queue: 'other' });
    await store.init();
    await store.close();
    expect(ds.isInitialized).toBe(true);
    expect(await ds.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
