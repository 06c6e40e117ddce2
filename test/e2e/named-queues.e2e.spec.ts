import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import {
  ConfigurationError,
  getAdmissionGuardToken,
  getTaskManagerToken,
  getTaskStoreToken,
  memoryStore,
  AdmissionGuard,
  PriorityQueueModule,
  PriorityQueueRegistry,
  PriorityTask,
  PRIORITY_QUEUE_STORE,
  QueueNotFoundError,
  TaskManager,
  TaskNotFoundError,
  TaskStatus,
  UnknownTaskTypeError,
  ValidationError,
  WaitTimeoutError,
  WrongQueueError,
} from 'nestjs-priority-queue';
import { createQueuesApp, EmailHandler, eventually, EventRecorder, historiesAfterOneTask, PdfHandler, Producer } from './support/queues-app';

describe('named queues (e2e, memory store)', () => {
  it('runs each queue with its own handlers, store, manager and guard; the default queue is injected as before', async () => {
    const app = await createQueuesApp({ store: memoryStore() });
    try {
      const registry = app.get(PriorityQueueRegistry);
      const p = app.get(Producer);
      expect(registry.names()).toEqual(['default', 'mail', 'reports']);
      // the classes and symbols of the first releases still inject the default queue
      expect(app.get(TaskManager)).toBe(registry.taskManager());
      expect(app.get(AdmissionGuard)).toBe(registry.admissionGuard('default'));
      expect(app.get(PRIORITY_QUEUE_STORE)).toBe(registry.store('default'));
      expect(p.defaults).toBe(app.get(getTaskManagerToken()));
      expect(p.reports).toBe(registry.taskManager('reports'));
      expect(p.reports).toBe(app.get(getTaskManagerToken('reports')));
      expect(p.mailGuard).toBe(app.get(getAdmissionGuardToken('mail')));
      expect(app.get(getTaskStoreToken('mail'))).toBe(registry.store('mail'));
      expect(new Set(['default', 'reports', 'mail'].map((q) => registry.store(q))).size).toBe(3);
      expect([p.defaults.queueName, p.reports.queueName, p.mail.queueName]).toEqual(['default', 'reports', 'mail']);
      expect(() => registry.taskManager('nope')).toThrow(QueueNotFoundError);

      const pdfs = await Promise.all(Array.from({ length: 20 }, (_, i) => p.reports.submit({ type: 'pdf', payload: { id: `r${i}` } })));
      const mails = await Promise.all(Array.from({ length: 20 }, (_, i) => p.mail.submit({ type: 'email', payload: { to: `u${i}@x` } })));
      const thumb = await p.defaults.submit({ type: 'thumbnail', payload: { name: 't' } });
      for (const t of pdfs) expect((await p.reports.waitFor(t.id, { timeoutMs: 15_000 })).status).toBe(TaskStatus.SUCCEEDED);
      for (const t of mails) expect((await p.mail.waitFor(t.id, { timeoutMs: 15_000 })).result).toBe('sent');
      expect((await p.defaults.waitFor(thumb.id, { timeoutMs: 15_000 })).result).toBe('t.png');
      expect(app.get(PdfHandler).ran.sort()).toEqual(pdfs.map((t) => t.payload.id).sort());
      expect(app.get(EmailHandler).sent).toHaveLength(20);
      // each task lives in its queue's store only
      expect(await p.defaults.get(pdfs[0].id)).toBeNull();
      expect(await p.mail.get(pdfs[0].id)).toBeNull();
      expect((await p.reports.stats()).byStatus.SUCCEEDED).toBe(20);
    } finally {
      await app.close();
    }
  });

  it("passes memoryStore's historyLimit to every queue's store (default 20, 0 = off); a bad one is refused at the call", async () => {
    for (const [store, want] of [
      [memoryStore(), ['PENDING_SUBMIT', 'SUBMITTING', 'SUCCEEDED']],
      [memoryStore({ historyLimit: 1 }), ['SUCCEEDED']],
      [memoryStore({ historyLimit: 0 }), []],
    ] as const) {
      const app = await createQueuesApp({ store });
      try {
        expect(await historiesAfterOneTask(app)).toEqual({ reports: want, mail: want });
      } finally {
        await app.close();
      }
    }
    expect(() => memoryStore({ historyLimit: 1.5 })).toThrow(ValidationError);
  });

  it('removeOnComplete: true in forRoot reaches the named queues: waitFor and events get the finished tasks, which are gone', async () => {
    const app = await createQueuesApp({ store: memoryStore(), root: { removeOnComplete: true } });
    try {
      const p = app.get(Producer);
      // waitFor listens from the moment it is called: called as soon as submit returns, it sees the end
      const ends = await Promise.all(
        Array.from({ length: 20 }, (_, i) => p.reports.submit({ type: 'pdf', payload: { id: `r${i}` } }).then((t) => p.reports.waitFor(t.id, { timeoutMs: 15_000 }))),
      );
      expect(ends.map((t) => t.status)).toEqual(ends.map(() => TaskStatus.SUCCEEDED));
      for (const t of ends) expect(await p.reports.get(t.id)).toBeNull();
      expect((await p.reports.stats()).byStatus.SUCCEEDED).toBe(0);
      const recorded = app.get(EventRecorder).reportsSucceeded;
      expect(recorded.map((e) => e.taskId).sort()).toEqual(ends.map((t) => t.id).sort());
      expect(recorded.every((e) => e.task.status === TaskStatus.SUCCEEDED)).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('an invalid removeOnFail fails the start-up with a ValidationError naming the option', async () => {
    await expect(createQueuesApp({ store: memoryStore(), root: { removeOnFail: { age: -1 } as never } })).rejects.toThrow(/removeOnFail of the queue/);
  });

  it('refuses a type submitted through another queue with WrongQueueError, and writes nothing', async () => {
    const app = await createQueuesApp({ store: memoryStore() });
    try {
      const p = app.get(Producer);
      const err = await p.defaults.submit({ type: 'pdf', payload: { id: 'x' } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongQueueError);
      expect(err).toMatchObject({ code: 'WRONG_QUEUE', type: 'pdf', queue: 'default', ownerQueue: 'reports' });
      expect((err as Error).message).toMatch(/belongs to queue "reports".*@InjectTaskManager\('reports'\)/);
      await expect(p.mail.submitMany([{ type: 'email', payload: { to: 'a' } }, { type: 'thumbnail' }])).rejects.toThrow(WrongQueueError);
      await expect(p.mail.submit({ type: 'nothing-anywhere' })).rejects.toBeInstanceOf(UnknownTaskTypeError);
      for (const q of [p.defaults, p.reports, p.mail]) {
        const s = await q.stats();
        expect(Object.values(s.byStatus).reduce((a, b) => a + b, 0)).toBe(0);
      }
    } finally {
      await app.close();
    }
  });

  it('keeps limits per queue: pausing a provider in one queue leaves the others running', async () => {
    const app = await createQueuesApp({ store: memoryStore() });
    try {
      const p = app.get(Producer);
      await p.reportsGuard.pause('pdf-engine');
      await p.mailGuard.pause('pdf-engine'); // another queue's limit of the same name: no effect on reports
      await p.mailGuard.resume('pdf-engine');
      const held = await p.reports.submit({ type: 'pdf', payload: { id: 'held' } });
      const mail = await p.mail.submit({ type: 'email', payload: { to: 'z' } });
      await p.mail.waitFor(mail.id, { timeoutMs: 15_000 });
      expect((await p.reports.get(held.id))!.status).toBe(TaskStatus.PENDING_SUBMIT);
      expect((await p.mailGuard.getLimits()).providers['pdf-engine']?.paused ?? false).toBe(false);
      await p.reportsGuard.resume('pdf-engine');
      expect((await p.reports.waitFor(held.id, { timeoutMs: 15_000 })).status).toBe(TaskStatus.SUCCEEDED);
    } finally {
      await app.close();
    }
  });

  it('calls @OnTaskEvent methods with their queue, type and event filters; a throwing listener breaks nothing', async () => {
    const app = await createQueuesApp({ store: memoryStore() });
    try {
      const p = app.get(Producer);
      const rec = app.get(EventRecorder);
      const ok = await p.reports.submit({ type: 'pdf', payload: { id: 'ok' } });
      const bad = await p.reports.submit({ type: 'pdf', payload: { id: 'bad', fail: true } });
      const mail = await p.mail.submit({ type: 'email', payload: { to: 'e' } });
      const thumb = await p.defaults.submit({ type: 'thumbnail', payload: { name: 'n' } });
      await Promise.all([p.reports.waitFor(ok.id), p.reports.waitFor(bad.id), p.mail.waitFor(mail.id), p.defaults.waitFor(thumb.id)]);
      await eventually(() => rec.clusterReports.some((e) => e.taskId === bad.id && e.to === TaskStatus.FAILED), 'cluster FAILED event');

      expect(rec.reportsSucceeded.map((e) => [e.queue, e.taskId, e.name, e.task.status])).toEqual([['reports', ok.id, 'succeeded', TaskStatus.SUCCEEDED]]);
      expect(rec.terminalEmails.map((e) => [e.queue, e.taskId, e.to])).toEqual([['mail', mail.id, TaskStatus.SUCCEEDED]]);
      expect(rec.failedAnywhere.map((e) => [e.queue, e.taskId, e.task.status, e.task.error])).toEqual([['reports', bad.id, TaskStatus.FAILED, 'pdf bad is broken']]);
      expect(rec.afterThrow).toEqual([mail.id]);
      // cluster scope: every transition of the reports queue, as ids and statuses (no task)
      const path = rec.clusterReports.filter((e) => e.taskId === ok.id).map((e) => `${e.from ?? '-'}>${e.to}:${e.name}`);
      expect(path).toEqual(['->PENDING_SUBMIT:created', 'PENDING_SUBMIT>SUBMITTING:submitting', 'SUBMITTING>SUCCEEDED:succeeded']);
      expect(rec.clusterReports.every((e) => e.queue === 'reports' && !('task' in e))).toBe(true);
      expect(rec.clusterReports.find((e) => e.taskId === bad.id && e.to === TaskStatus.FAILED)?.error).toBe('pdf bad is broken');
    } finally {
      await app.close();
    }
  });

  it('waitFor: the terminal task, a typed timeout, a typed not-found, and no lost answer when events are not published', async () => {
    const backend = memoryStore();
    // a producer-only app and a worker app on one backend: the worker does not publish its events
    const producer = await createQueuesApp({ store: backend, root: { workers: { enabled: false } } });
    const worker = await createQueuesApp({ store: backend, root: { events: { publish: false } } });
    try {
      const p = producer.get(Producer);
      const t = await p.reports.submit({ type: 'pdf', payload: { id: 'w' } });
      const done = await p.reports.waitFor(t.id, { timeoutMs: 15_000, pollMs: 20 });
      expect(done).toMatchObject({ id: t.id, status: TaskStatus.SUCCEEDED, result: { pages: 1 } });
      expect(worker.get(PdfHandler).ran).toEqual(['w']);
      expect(producer.get(PdfHandler).ran).toEqual([]);

      await worker.get(Producer).reportsGuard.pause('pdf-engine');
      const stuck = await p.reports.submit({ type: 'pdf', payload: { id: 'stuck' } });
      const err = await p.reports.waitFor(stuck.id, { timeoutMs: 50, pollMs: 10 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WaitTimeoutError);
      expect(err).toMatchObject({ code: 'WAIT_TIMEOUT', taskId: stuck.id, lastStatus: TaskStatus.PENDING_SUBMIT });
      expect((await p.reports.get(stuck.id))!.status).toBe(TaskStatus.PENDING_SUBMIT); // not cancelled
      await expect(p.reports.waitFor('no-such-task', { timeoutMs: 1000 })).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(p.reports.waitFor(stuck.id, { timeoutMs: -1 })).rejects.toThrow(/timeoutMs/);
      const aborted = new AbortController();
      const waiting = p.reports.waitFor(stuck.id, { signal: aborted.signal });
      aborted.abort(new Error('client went away'));
      await expect(waiting).rejects.toThrow('client went away');
    } finally {
      await producer.close();
      await worker.close();
    }
  });

  it('shares the queues of one memory backend between two apps: cluster events of the other app arrive', async () => {
    const backend = memoryStore();
    const a = await createQueuesApp({ store: backend, root: { workers: { enabled: false } } });
    const b = await createQueuesApp({ store: backend });
    try {
      const t = await a.get(Producer).reports.submit({ type: 'pdf', payload: { id: 'shared' } });
      await eventually(() => a.get(EventRecorder).clusterReports.some((e) => e.taskId === t.id && e.to === TaskStatus.SUCCEEDED), 'the other app\'s SUCCEEDED');
      // the local-scope listener of the app that ran it saw it; the producer's did not
      expect(b.get(EventRecorder).reportsSucceeded.map((e) => e.taskId)).toEqual([t.id]);
      expect(a.get(EventRecorder).reportsSucceeded).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('module set-up mistakes (e2e)', () => {
  @PriorityTask('orphan', { queue: 'nowhere' })
  class OrphanHandler {
    run() {
      return 1;
    }
  }

  @PriorityTask('shared-type', { queue: 'reports' })
  class SharedTypeHandler {
    run() {
      return 1;
    }
  }

  async function startFails(imports: unknown[], providers: unknown[] = []): Promise<unknown> {
    let ref;
    try {
      ref = await Test.createTestingModule({ imports: [ScheduleModule.forRoot(), ...(imports as never[])], providers: providers as never[] }).compile();
      await ref.init();
    } catch (e) {
      await ref?.close().catch(() => undefined);
      return e;
    }
    await ref.close();
    throw new Error('start-up did not fail');
  }

  it('fails at start-up when forRoot is imported twice', async () => {
    @Module({ imports: [PriorityQueueModule.forRoot({ workers: { concurrency: 2 } })] })
    class FeatureWithItsOwnRoot {}
    const err = await startFails([PriorityQueueModule.forRoot({ logLevel: 'off' }), FeatureWithItsOwnRoot]);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/forRoot\(\) \/ forRootAsync\(\) is imported twice/);
  });

  it('fails at start-up when a queue is registered twice', async () => {
    @Module({ imports: [PriorityQueueModule.registerQueue({ name: 'reports', workers: { concurrency: 1 } })] })
    class A {}
    @Module({ imports: [PriorityQueueModule.registerQueue({ name: 'reports', workers: { concurrency: 2 } })] })
    class B {}
    const err = await startFails([PriorityQueueModule.forRoot({ logLevel: 'off' }), A, B]);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/Queue "reports" is registered twice/);
    const named = await startFails([PriorityQueueModule.forRoot({ logLevel: 'off' }), PriorityQueueModule.registerQueue({ name: 'default' })]);
    expect((named as Error).message).toMatch(/Queue "default" is registered twice/);
  });

  it('fails at start-up on a handler of an unregistered queue, a type in two queues, a bad queue name, registerQueue without forRoot', async () => {
    const orphan = await startFails([PriorityQueueModule.forRoot({ logLevel: 'off' })], [OrphanHandler]);
    expect((orphan as Error).message).toMatch(/@PriorityTask\('orphan'\) on OrphanHandler uses queue "nowhere", which is not registered/);
    const twice = await startFails(
      [PriorityQueueModule.forRoot({ logLevel: 'off', taskTypes: [{ type: 'shared-type' }] }), PriorityQueueModule.registerQueue({ name: 'reports' })],
      [SharedTypeHandler],
    );
    expect((twice as Error).message).toMatch(/Task type "shared-type" is registered in queue "default" and in queue "reports"/);
    const badName = await startFails([PriorityQueueModule.forRoot({ logLevel: 'off' }), PriorityQueueModule.registerQueue({ name: 'a b{c}' })]);
    expect((badName as Error).message).toMatch(/Invalid queue name "a b\{c\}"/);
    const noRoot = await startFails([PriorityQueueModule.registerQueue({ name: 'reports' })]);
    expect((noRoot as Error).message).toMatch(/registerQueue\(\{ name: 'reports' \}\) needs PriorityQueueModule.forRoot\(\)/);
  });

  it('registerQueueAsync takes its options from a factory', async () => {
    @Module({ providers: [{ provide: 'CONCURRENCY', useValue: 3 }], exports: ['CONCURRENCY'] })
    class ConfigModule {}
    const ref = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        PriorityQueueModule.forRoot({ logLevel: 'off', workers: { idlePollMs: 20 } }),
        PriorityQueueModule.registerQueueAsync({
          name: 'reports',
          imports: [ConfigModule],
          inject: ['CONCURRENCY'],
          useFactory: (concurrency: number) => ({ workers: { concurrency }, taskTypes: [{ type: 'declared-only' }] }),
          isGlobal: true,
        }),
      ],
    }).compile();
    await ref.init();
    try {
      const reports = ref.get<TaskManager>(getTaskManagerToken('reports'));
      expect((await reports.submit({ type: 'declared-only' })).status).toBe(TaskStatus.PENDING_SUBMIT);
      // no handler of the queue in this process: no worker, the task waits for one elsewhere
      expect(ref.get(PriorityQueueRegistry).handle('reports').worker).toBeNull();
      expect(ref.get(PriorityQueueRegistry).handle('reports').options.workers).toMatchObject({ concurrency: 3, idlePollMs: 20 });
    } finally {
      await ref.close();
    }
  });
});
