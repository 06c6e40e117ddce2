import { Injectable } from '@nestjs/common';
import { TaskManager, PriorityTask, type HandlerContext, type Task } from 'nestjs-priority-queue';
import { until, type CompatStep } from '../step.js';

@Injectable()
export class Shouter {
  shout(text: string): string {
    return text.toUpperCase();
  }
}

/** A handler with a dependency injected by type, as real handlers have (decorator metadata). */
@PriorityTask('compat.echo', { providerKey: 'compat' })
export class EchoHandler {
  constructor(private readonly shouter: Shouter) {}

  async run({ payload }: HandlerContext<{ text: string }>) {
    return { echoed: this.shouter.shout(payload.text) };
  }
}

/** A one-shot handler's task, submitted through TaskManager, reaches SUCCEEDED with its result. */
export const handlerSucceeds: CompatStep = {
  name: 'handler reaches SUCCEEDED',
  providers: [Shouter, EchoHandler],
  async run(app) {
    const tasks = app.get(TaskManager);
    const submitted = await tasks.submit({ type: 'compat.echo', payload: { text: 'hello' }, priority: 5 });
    const done: Task = await until(async () => {
      const t = await tasks.get(submitted.id);
      return t && ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'CANCELED', 'SUBMIT_UNKNOWN'].includes(t.status) ? t : undefined;
    }, `task ${submitted.id} to finish`);
    if (done.status !== 'SUCCEEDED') throw new Error(`task ended ${done.status}: ${done.error}`);
    if (JSON.stringify(done.result) !== JSON.stringify({ echoed: 'HELLO' })) throw new Error(`unexpected result ${JSON.stringify(done.result)}`);
    const failed = await tasks.list('FAILED');
    if (failed.length !== 0) throw new Error(`${failed.length} FAILED tasks`);
  },
};
