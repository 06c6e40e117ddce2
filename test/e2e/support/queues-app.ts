import { Injectable, Module, type DynamicModule, type Provider, type Type } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  InjectAdmissionGuard,
  InjectTaskManager,
  OnTaskEvent,
  PriorityQueueModule,
  PriorityTask,
  TaskManager,
  type AdmissionGuard,
  type ClusterTaskEvent,
  type HandlerContext,
  type PriorityQueueModuleOptions,
  type QueueTaskEvent,
  type StoreBackend,
} from 'nestjs-priority-queue';

/**
 * A small app with the default queue and two named queues (`reports`, `mail`), shared by the
 * named-queue e2e specs of each store: handlers per queue, a producer service injecting each
 * queue's manager by name, and an event recorder with @OnTaskEvent filters.
 */
@PriorityTask('thumbnail')
export class ThumbnailHandler {
  run({ payload }: HandlerContext<{ name: string }>) {
    return `${payload.name}.png`;
  }
}

@PriorityTask('pdf', { queue: 'reports', providerKey: 'pdf-engine', maxAttempts: 2, backoff: { baseMs: 1, maxMs: 2 } })
export class PdfHandler {
  readonly ran: string[] = [];
  async run({ payload }: HandlerContext<{ id: string; fail?: boolean }>) {
    if (payload.fail) throw new Error(`pdf ${payload.id} is broken`);
    this.ran.push(payload.id);
    return { pages: payload.id.length };
  }
}

@PriorityTask('email', { queue: 'mail', providerKey: 'smtp' })
export class EmailHandler {
  readonly sent: string[] = [];
  run({ payload }: HandlerContext<{ to: string }>) {
    this.sent.push(payload.to);
    return 'sent';
  }
}

@Injectable()
export class Producer {
  constructor(
    readonly defaults: TaskManager,
    @InjectTaskManager('reports') readonly reports: TaskManager,
    @InjectTaskManager('mail') readonly mail: TaskManager,
    @InjectAdmissionGuard('reports') readonly reportsGuard: AdmissionGuard,
    @InjectAdmissionGuard('mail') readonly mailGuard: AdmissionGuard,
  ) {}
}

/** Records what each @OnTaskEvent filter saw. */
@Injectable()
export class EventRecorder {
  readonly reportsSucceeded: QueueTaskEvent[] = [];
  readonly terminalEmails: QueueTaskEvent[] = [];
  readonly failedAnywhere: QueueTaskEvent[] = [];
  readonly clusterReports: ClusterTaskEvent[] = [];
  readonly afterThrow: string[] = [];

  @OnTaskEvent('succeeded', { queue: 'reports' })
  onReport(e: QueueTaskEvent) {
    this.reportsSucceeded.push(e);
  }

  @OnTaskEvent('terminal', { type: 'email' })
  onEmailDone(e: QueueTaskEvent) {
    this.terminalEmails.push(e);
  }

  @OnTaskEvent(['failed', 'submit_unknown'])
  onFailure(e: QueueTaskEvent) {
    this.failedAnywhere.push(e);
  }

  @OnTaskEvent('transition', { queue: 'reports', scope: 'cluster' })
  onClusterReport(e: ClusterTaskEvent) {
    this.clusterReports.push(e);
  }

  @OnTaskEvent('created', { queue: 'mail' })
  async throwsAsync(e: QueueTaskEvent) {
    throw new Error(`listener bug on ${e.taskId}`);
  }

  @OnTaskEvent('created', { queue: 'mail' })
  afterTheThrowingOne(e: QueueTaskEvent) {
    this.afterThrow.push(e.taskId);
  }
}

const namedQueues = PriorityQueueModule.registerQueue({ name: 'reports', workers: { concurrency: 2 } }, { name: 'mail' });

/** Registers the named queues and re-exports them to the modules that import it. */
@Module({
  imports: [namedQueues],
  providers: [PdfHandler, EmailHandler, Producer, EventRecorder],
  exports: [namedQueues, Producer],
})
export class FeatureModule {}

export interface QueuesAppOptions {
  store: StoreBackend;
  root?: Omit<PriorityQueueModuleOptions, 'store'>;
  /** Extra imports (e.g. a health module). */
  imports?: Array<DynamicModule | Type>;
  controllers?: Type[];
  providers?: Provider[];
}

/** The compiled module of the app, not initialised (for createNestApplication()). */
export function compileQueuesApp(o: QueuesAppOptions): Promise<TestingModule> {
  return Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      PriorityQueueModule.forRoot({ store: o.store, workers: { idlePollMs: 20, recoverEveryMs: 50 }, logLevel: 'off', ...o.root }),
      FeatureModule,
      ...(o.imports ?? []),
    ],
    controllers: o.controllers ?? [],
    providers: [ThumbnailHandler, ...(o.providers ?? [])],
  }).compile();
}

export async function createQueuesApp(o: QueuesAppOptions): Promise<TestingModule> {
  const ref = await compileQueuesApp(o);
  await ref.init();
  return ref;
}

/** Polls `fn` until it returns a truthy value (the e2e's only wait; every test has jest's own timeout). */
export async function eventually<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Runs one task through each named queue and reads its history (TaskManager.history), as the
 * statuses it went to: what the store factory's `historyLimit` kept in every queue's store.
 */
export async function historiesAfterOneTask(app: TestingModule): Promise<{ reports: string[]; mail: string[] }> {
  const p = app.get(Producer);
  const pdf = await p.reports.submit({ type: 'pdf', payload: { id: 'history' } });
  const mail = await p.mail.submit({ type: 'email', payload: { to: 'history' } });
  await p.reports.waitFor(pdf.id, { timeoutMs: 20_000, pollMs: 20 });
  await p.mail.waitFor(mail.id, { timeoutMs: 20_000, pollMs: 20 });
  const statuses = async (m: TaskManager, id: string) => (await m.history(id)).map((e) => e.to);
  return { reports: await statuses(p.reports, pdf.id), mail: await statuses(p.mail, mail.id) };
}
