import { Injectable } from '@nestjs/common';
import {
  InjectAdmissionGuard,
  InjectTaskManager,
  OnTaskEvent,
  PriorityQueueModule,
  PriorityQueueRegistry,
  PriorityTask,
  TaskManager,
  WrongQueueError,
  type AdmissionGuard,
  type HandlerContext,
  type QueueTaskEvent,
} from 'nestjs-priority-queue';
import { expectJson, until, type CompatStep } from '../step.js';

const REPORTS = 'reports';
const EXPORTS = 'exports';

@PriorityTask('compat.report', { queue: REPORTS })
export class ReportHandler {
  async run({ payload }: HandlerContext<{ pages: number }>) {
    return { printed: payload.pages };
  }
}

@PriorityTask('compat.export', { queue: EXPORTS })
export class ExportHandler {
  async run({ payload }: HandlerContext<{ rows: number }>) {
    return { exported: payload.rows };
  }
}

/** Both named queues injected by name, with @OnTaskEvent methods filtered by queue. */
@Injectable()
export class Queues {
  readonly succeeded: Record<string, string[]> = { [REPORTS]: [], [EXPORTS]: [] };

  constructor(
    @InjectTaskManager(REPORTS) readonly reports: TaskManager,
    @InjectTaskManager(EXPORTS) readonly exportsQueue: TaskManager,
    @InjectAdmissionGuard(EXPORTS) readonly exportsGuard: AdmissionGuard,
  ) {}

  @OnTaskEvent('succeeded', { queue: REPORTS, type: 'compat.report' })
  onReport(e: QueueTaskEvent) {
    this.succeeded[e.queue].push(e.taskId);
  }

  @OnTaskEvent('succeeded', { queue: EXPORTS })
  onExport(e: QueueTaskEvent) {
    this.succeeded[e.queue].push(e.taskId);
  }
}

/**
 * Two named queues next to the default one: a task of each runs to SUCCEEDED (waitFor) in its own
 * queue, each queue's @OnTaskEvent handler sees its own task only, the registry lists the three,
 * limits are per queue (a provider paused in one holds nothing of the other), and a queue's type
 * is refused by the default queue.
 */
export const namedQueue: CompatStep = {
  name: 'named queues, @OnTaskEvent, waitFor',
  imports: [
    PriorityQueueModule.registerQueue({ name: REPORTS, workers: { concurrency: 2 } }),
    PriorityQueueModule.registerQueue({ name: EXPORTS, workers: { concurrency: 2 } }),
  ],
  providers: [ReportHandler, ExportHandler, Queues],
  async run(app) {
    const q = app.get(Queues);
    expectJson([q.reports.queueName, q.exportsQueue.queueName], [REPORTS, EXPORTS], 'the injected managers are the named queues');
    expectJson(app.get(PriorityQueueRegistry).names(), ['default', EXPORTS, REPORTS], 'the registry lists the queues');
    await q.exportsGuard.pause('compat-provider');
    const report = await q.reports.submit({ type: 'compat.report', payload: { pages: 3 }, providerKey: 'compat-provider' });
    const held = await q.exportsQueue.submit({ type: 'compat.export', payload: { rows: 7 }, providerKey: 'compat-provider' });
    const done = await q.reports.waitFor(report.id, { timeoutMs: 20_000 });
    expectJson([done.status, done.result], ['SUCCEEDED', { printed: 3 }], 'the reports task (its provider paused in the exports queue only)');
    expectJson((await q.exportsQueue.get(held.id))?.status, 'PENDING_SUBMIT', 'the exports task while its provider is paused there');
    await q.exportsGuard.resume('compat-provider');
    const exported = await q.exportsQueue.waitFor(held.id, { timeoutMs: 20_000 });
    expectJson([exported.status, exported.result], ['SUCCEEDED', { exported: 7 }], 'the exports task after resume');
    // waitFor may see the terminal task (its re-read, or the store's event) before the worker that
    // wrote it has emitted its local event: wait for the @OnTaskEvent calls themselves
    await until(async () => (q.succeeded[REPORTS].includes(report.id) && q.succeeded[EXPORTS].includes(held.id) ? true : undefined), '@OnTaskEvent to see both successes');
    expectJson(q.succeeded, { [REPORTS]: [report.id], [EXPORTS]: [held.id] }, 'each queue handler saw its own task only');
    expectJson([(await q.reports.get(held.id)) === null, (await q.exportsQueue.get(report.id)) === null], [true, true], 'each queue holds its own tasks');
    const wrong = await app
      .get(TaskManager)
      .submit({ type: 'compat.report', payload: { pages: 1 } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    if (!(wrong instanceof WrongQueueError) || wrong.code !== 'WRONG_QUEUE') throw new Error(`expected WrongQueueError, got ${String(wrong)}`);
    return `queues: ${app.get(PriorityQueueRegistry).names().join(', ')}`;
  },
};
