import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { PermanentError, PriorityQueueModule, PriorityTask, TaskManager, TaskStatus, type HandlerContext, type Task } from 'nestjs-priority-queue';

@PriorityTask('literal.fails', { maxAttempts: 1 })
class FailingHandler {
  async run({ payload }: HandlerContext<{ n: number }>) {
    throw new PermanentError(`no ${payload.n}`);
  }
}

@Module({ providers: [FailingHandler] })
class HandlersModule {}

/**
 * TaskStatus is a value and a string literal type: a status written as a string compiles
 * wherever a TaskStatus is asked for (npm run typecheck checks the calls below) and means the
 * same as the constant at run time.
 */
describe('TaskStatus as string literals', () => {
  let moduleRef: TestingModule;
  let tasks: TaskManager;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), PriorityQueueModule.forRoot({ workers: { concurrency: 2, idlePollMs: 5 } }), HandlersModule],
    }).compile();
    await moduleRef.init();
    tasks = moduleRef.get(TaskManager);
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it('lists by a literal, positional or as a query object, as by the constant', async () => {
    const submitted = await Promise.all([1, 2, 3].map((n) => tasks.submit({ type: 'literal.fails', payload: { n } })));
    const deadline = Date.now() + 10_000;
    let failed: Task[] = [];
    while (failed.length < 3 && Date.now() < deadline) {
      failed = await tasks.list('FAILED');
      if (failed.length < 3) await new Promise((r) => setTimeout(r, 10));
    }
    const ids = submitted.map((t) => t.id).sort();
    expect(failed.map((t) => t.id).sort()).toEqual(ids);
    expect((await tasks.list({ status: 'FAILED' })).map((t) => t.id).sort()).toEqual(ids);
    expect((await tasks.list(TaskStatus.FAILED)).map((t) => t.id).sort()).toEqual(ids);
    const firstPage = await tasks.list({ status: 'FAILED', limit: 2 });
    expect(firstPage).toHaveLength(2);
    const rest = await tasks.list({ status: TaskStatus.FAILED, limit: 2, afterSeq: firstPage[1].seq });
    expect([...firstPage, ...rest].map((t) => t.id).sort()).toEqual(ids);
    const status: TaskStatus = failed[0].status;
    expect(status === 'FAILED').toBe(true);
    const one: TaskStatus.FAILED = TaskStatus.FAILED;
    expect(one).toBe('FAILED');
    expect(Object.values(TaskStatus)).toEqual([
      'PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN',
    ]);
  });

  it('refuses a string that is no status with a typed error', async () => {
    await expect(tasks.list('DONE' as TaskStatus)).rejects.toThrow(/status/);
  });
});
