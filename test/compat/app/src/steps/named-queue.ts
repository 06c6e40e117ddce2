import { Injectable } from '@nestjs/common';
import {
  InjectTaskManager,
  OnTaskEvent,
  PriorityQueueModule,
  PriorityQueueRegistry,
  PriorityTask,
  TaskManager,
  WrongQueueError,
  type HandlerContext,
  type QueueTaskEvent,
} from 'nestjs-priority-queue';
import { expectJson, until, type CompatStep } from '../step.js';

const QUEUE = 'reports';

@PriorityTask('compat.report', { queue: QUEUE })
export class ReportHandler {
  async run({ payload }: HandlerContext<{ pages: number }>) {
    return { printed: payload.pages };
  }
}

/** Injected by queue name, with an @OnTaskEvent method on the same queue. */
@Injectable()
export class Reports {
  readonly succeeded: string[] = [];

  constructor(@InjectTaskManager(QUEUE) readonly tasks: TaskManager) {}

  @OnTaskEvent('succeeded', { queue: QUEUE, type: 'compat.report' })
  onSucceeded(e: QueueTaskEvent) {
    this.succeeded.push(e.taskId);
  }
}

/**
 * A named queue next to the default one: its task runs to SUCCEEDED (waitFor), its @OnTaskEvent
 * handler sees it, the registry lists both queues, and its type refused by the default queue.
 */
export const namedQueue: CompatStep = {
  name: 'named queue, @OnTaskEvent, waitFor',
  imports: [PriorityQueueModule.registerQueue({ name: QUEUE, workers: { concurrency: 2 } })],
  providers: [ReportHandler, Reports],
  async run(app) {
    const reports = app.get(Reports);
    expectJson(reports.tasks.queueName, QUEUE, 'the injected manager is the named queue');
    expectJson(app.get(PriorityQueueRegistry).names(), ['default', QUEUE], 'the registry lists the queues');
    const task = await reports.tasks.submit({ type: 'compat.report', payload: { pages: 3 } });
    const done = await reports.tasks.waitFor(task.id, { timeoutMs: 20_000 });
    expectJson([done.status, done.result], ['SUCCEEDED', { printed: 3 }], 'the named queue task');
    // waitFor may see the terminal task (its re-read, or the store's event) before the worker that
    // wrote it has emitted its local event: wait for the @OnTaskEvent call itself
    await until(async () => (reports.succeeded.includes(task.id) ? true : undefined), '@OnTaskEvent to see the success');
    const wrong = await app
      .get(TaskManager)
      .submit({ type: 'compat.report', payload: { pages: 1 } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    if (!(wrong instanceof WrongQueueError) || wrong.code !== 'WRONG_QUEUE') throw new Error(`expected WrongQueueError, got ${String(wrong)}`);
  },
};
