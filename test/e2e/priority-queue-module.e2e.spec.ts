import { createHook } from 'node:async_hooks';
import { Injectable, Module } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AdmissionGuard,
  PriorityQueueMetrics,
  PriorityQueueModule,
  PriorityTask,
  PRIORITY_QUEUE_STORE,
  TaskManager,
  TaskStatus,
  UnknownTaskTypeError,
  ValidationError,
  type HandlerContext,
  type PollContext,
  type PollResult,
  type Task,
  type TaskEvent,
  type TaskStore,
} from 'nestjs-priority-queue';

/** Configuration the app reads asynchronously, as a real app would from @nestjs/config. */
@Injectable()
class QueueConfig {
  readonly concurrency = 4;
}

@Module({ providers: [QueueConfig], exports: [QueueConfig] })
class ConfigModule {}

@PriorityTask('thumbnail', { maxAttempts: 3, backoff: { baseMs: 1, maxMs: 5 } })
class ThumbnailHandler {
  readonly seen: string[] = [];
  failOnce = new Set<string>();
  async run({ payload }: HandlerContext<{ name: string }>) {
    if (this.failOnce.delete(payload.name)) throw new Error('transient');
    this.seen.push(payload.name);
    return { thumb: `${payload.name}.png` };
  }
}

/** A simulated provider: accepts a job, reports done after two polls. */
@PriorityTask('ocr', { providerKey: 'vendorA', pollIntervalMs: 5 })
class OcrHandler {
  private polls = new Map<string, number>();
  async submit({ payload }: HandlerContext<{ doc: string }>) {
    return `job-${payload.doc}`;
  }
  async poll({ externalId }: PollContext): Promise<PollResult> {
    const n = (this.polls.get(externalId) ?? 0) + 1;
    this.polls.set(externalId, n);
    return n < 3 ? { done: false, nextPollMs: 5 } : { done: true, result: { text: `text of ${externalId}` } };
  }
}

@Module({ providers: [ThumbnailHandler, OcrHandler] })
class HandlersModule {}

async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('PriorityQueueModule (e2e, memory store)', () => {
  let moduleRef: TestingModule;
  let tasks: TaskManager;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        PriorityQueueModule.forRootAsync({
          imports: [ConfigModule],
          inject: [QueueConfig],
          useFactory: (cfg: QueueConfig) => ({ workers: { concurrency: cfg.concurrency, idlePollMs: 20, recoverEveryMs: 50 } }),
        }),
        HandlersModule,
      ],
    }).compile();
    moduleRef.enableShutdownHooks();
    await moduleRef.init();
    tasks = moduleRef.get(TaskManager);
  });

  afterEach(async () => {
    await moduleRef?.close();
  });

  it('runs a one-shot handler to SUCCEEDED and retries a transient error', async () => {
    moduleRef.get(ThumbnailHandler).failOnce.add('b');
    const a = await tasks.submit({ type: 'thumbnail', payload: { name: 'a' } });
    const b = await tasks.submit({ type: 'thumbnail', payload: { name: 'b' } });
    const doneA = await waitFor(async () => ((await tasks.get(a.id))?.status === TaskStatus.SUCCEEDED ? tasks.get(a.id) : null), 'a');
    const doneB = await waitFor(async () => ((await tasks.get(b.id))?.status === TaskStatus.SUCCEEDED ? tasks.get(b.id) : null), 'b');
    expect(doneA!.result).toEqual({ thumb: 'a.png' });
    expect(doneB!.attempts).toBe(1);
    expect(moduleRef.get(ThumbnailHandler).seen.sort()).toEqual(['a', 'b']);
  });

  it('submits then polls a provider task until done, emitting every transition', async () => {
    const events: TaskEvent[] = [];
    tasks.onEvent((e) => events.push(e));
    const t = await tasks.submit({ type: 'ocr', payload: { doc: 'd1' } });
    expect(t.providerKey).toBe('vendorA');
    const done = await waitFor(async () => {
      const x = await tasks.get(t.id);
      return x?.status === TaskStatus.SUCCEEDED ? x : null;
    }, 'ocr task');
    expect(done.externalId).toBe('job-d1');
    expect(done.result).toEqual({ text: 'text of job-d1' });
    const path = events.filter((e) => e.taskId === t.id).map((e) => `${e.from ?? '-'}>${e.to}`);
    expect(path).toEqual([
      '->PENDING_SUBMIT',
      'PENDING_SUBMIT>SUBMITTING',
      'SUBMITTING>SUBMITTED',
      'SUBMITTED>RUNNING',
      'RUNNING>SUCCEEDED',
    ]);
  });

  it('keeps a paused provider waiting while others run, then resumes it', async () => {
    const guard = moduleRef.get(AdmissionGuard);
    await guard.pause('vendorA');
    const ocr = await tasks.submit({ type: 'ocr', payload: { doc: 'p' }, priority: 100 });
    const thumb = await tasks.submit({ type: 'thumbnail', payload: { name: 'x' } });
    await waitFor(async () => (await tasks.get(thumb.id))?.status === TaskStatus.SUCCEEDED, 'thumbnail');
    expect((await tasks.get(ocr.id))!.status).toBe(TaskStatus.PENDING_SUBMIT);
    await guard.resume('vendorA');
    await waitFor(async () => (await tasks.get(ocr.id))?.status === TaskStatus.SUCCEEDED, 'ocr after resume');
  });

  it('rejects bad input with typed errors and writes nothing', async () => {
    await expect(tasks.submit({ type: 'nope' })).rejects.toBeInstanceOf(UnknownTaskTypeError);
    await expect(tasks.submit({ type: 'thumbnail', priority: 1.5 })).rejects.toBeInstanceOf(ValidationError);
    await expect(tasks.submit({ type: 'thumbnail', priority: 2 ** 31 })).rejects.toThrow(/priority/);
    await expect(tasks.submit({ type: 'thumbnail', delayMs: -1 })).rejects.toThrow(/delayMs/);
    await expect(tasks.submit({ type: 'thumbnail', payload: { n: 10n } })).rejects.toThrow(/BigInt/);
    await expect(tasks.submit({ type: 'thumbnail', tenant: 'x' } as never)).rejects.toThrow(/tenant/);
    const store = moduleRef.get<TaskStore>(PRIORITY_QUEUE_STORE);
    const stats = await store.stats();
    expect(Object.values(stats.byStatus).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('registers worker timers in SchedulerRegistry and removes them on shutdown', async () => {
    const scheduler = moduleRef.get(SchedulerRegistry);
    const names = scheduler.getIntervals().filter((n) => n.startsWith('priority-queue:'));
    expect(names.length).toBeGreaterThanOrEqual(2);
    await moduleRef.close();
    expect(scheduler.getIntervals().filter((n) => n.startsWith('priority-queue:'))).toEqual([]);
  });
});

describe('PriorityQueueModule shutdown and metrics', () => {
  it('leaves no timer behind after a clean shutdown, even with handlers in flight', async () => {
    // Track every Timeout created by the library or Nest until it is cleared or has fired.
    const live = new Map<number, string>();
    const hook = createHook({
      init(id, type) {
        if (type !== 'Timeout') return;
        const stack = new Error().stack ?? '';
        if (/libs[\\/]priority-queue|@nestjs/.test(stack)) live.set(id, stack);
      },
      destroy(id) {
        live.delete(id);
      },
    }).enable();
    try {
      const ref = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          PriorityQueueModule.forRoot({ workers: { concurrency: 2, idlePollMs: 10, shutdownGraceMs: 200 }, metrics: true }),
          HandlersModule,
        ],
      }).compile();
      await ref.init();
      const tm = ref.get(TaskManager);
      await tm.submitMany([1, 2, 3, 4].map((i) => ({ type: 'ocr', payload: { doc: `s${i}` } })));
      await waitFor(async () => (await tm.stats()).byStatus.RUNNING > 0, 'a running task');
      expect(live.size).toBeGreaterThan(0); // the worker's timers are seen while it runs
      await ref.close();
      await new Promise((r) => setImmediate(r));
      expect([...live.values()]).toEqual([]);
    } finally {
      hook.disable();
    }
  });

  it('exposes Prometheus metrics of transitions and queue state', async () => {
    const ref = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), PriorityQueueModule.forRoot({ workers: { idlePollMs: 10 }, metrics: true }), HandlersModule],
    }).compile();
    await ref.init();
    const tm = ref.get(TaskManager);
    const t = await tm.submit({ type: 'thumbnail', payload: { name: 'm' } });
    await tm.submit({ type: 'ocr', payload: { doc: 'held' }, delayMs: 60_000, priority: 7 });
    await waitFor(async () => (await tm.get(t.id))?.status === TaskStatus.SUCCEEDED, 'thumbnail');
    const text = await ref.get(PriorityQueueMetrics).registry!.metrics();
    expect(text).toMatch(/priority_queue_transitions_total\{queue="default",type="thumbnail",from="SUBMITTING",to="SUCCEEDED"\} 1/);
    expect(text).toMatch(/priority_queue_tasks\{queue="default",status="SUCCEEDED"\} 1/);
    expect(text).toMatch(/priority_queue_pending\{queue="default",priority="7"\} 1/);
    await ref.close();
  });
});

describe('PriorityQueueModule misconfiguration', () => {
  it('fails start-up on two handlers for one type', async () => {
    @PriorityTask('dup')
    class A {
      run() {
        return 1;
      }
    }
    @PriorityTask('dup')
    class B {
      run() {
        return 2;
      }
    }
    const ref = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), PriorityQueueModule.forRoot({}), ],
      providers: [A, B],
    }).compile();
    await expect(ref.init()).rejects.toThrow(/two handlers/);
    await ref.close().catch(() => undefined); // close() re-throws the failed initialisation
  });

  it('a producer-only process submits declared types and runs nothing', async () => {
    const ref = await Test.createTestingModule({
      imports: [PriorityQueueModule.forRoot({ workers: { enabled: false }, taskTypes: [{ type: 'report', providerKey: 'pdf' }] })],
    }).compile();
    await ref.init();
    const tm = ref.get(TaskManager);
    const t: Task = await tm.submit({ type: 'report', payload: { id: 1 } });
    expect(t.providerKey).toBe('pdf');
    await new Promise((r) => setTimeout(r, 50));
    expect((await tm.get(t.id))!.status).toBe(TaskStatus.PENDING_SUBMIT);
    await expect(tm.submit({ type: 'other' })).rejects.toThrow(/Unknown task type "other"/);
    await ref.close();
  });

  it('explains the missing ScheduleModule when workers are on', async () => {
    const ref = await Test.createTestingModule({ imports: [PriorityQueueModule.forRoot({})] }).compile();
    await expect(ref.init()).rejects.toThrow(/ScheduleModule.forRoot\(\)/);
    await ref.close().catch(() => undefined);
  });
});
