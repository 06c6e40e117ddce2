import { TaskManager, type Task } from 'nestjs-priority-queue';
import { until, type CompatStep } from '../step.js';

/**
 * BullMQ in the same app and on the same Redis, through the same ioredis: a BullMQ job and one
 * of our tasks both complete.
 */
export const bullmqSideBySide: CompatStep = {
  name: 'BullMQ job next to a task (shared ioredis)',
  stores: ['redis'],
  async run(app) {
    const { Queue, Worker, QueueEvents } = await import('bullmq');
    const { Redis } = await import('ioredis');
    const url = process.env.COMPAT_REDIS_URL as string;
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    const name = `compat-bull-${process.pid}`;
    // BullMQ never closes a connection it was given: the step quits all three itself
    const [eventsConnection, workerConnection] = [connection.duplicate(), connection.duplicate()];
    const queue = new Queue(name, { connection });
    const events = new QueueEvents(name, { connection: eventsConnection });
    const worker = new Worker(name, async (job) => ({ doubled: (job.data as { n: number }).n * 2 }), { connection: workerConnection });
    try {
      await events.waitUntilReady();
      const tasks = app.get(TaskManager);
      const [job, task] = await Promise.all([
        queue.add('double', { n: 21 }),
        tasks.submit({ type: 'compat.echo', payload: { text: 'next to bullmq' } }),
      ]);
      const bullResult = (await job.waitUntilFinished(events, 20_000)) as { doubled: number };
      if (bullResult.doubled !== 42) throw new Error(`BullMQ job returned ${JSON.stringify(bullResult)}`);
      const done: Task = await until(async () => {
        const t = await tasks.get(task.id);
        return t?.status === 'SUCCEEDED' ? t : undefined;
      }, `task ${task.id} to succeed next to BullMQ`);
      return `bullmq job ${job.id} and task ${done.id} done`;
    } finally {
      await worker.close();
      await events.close();
      await queue.close();
      await Promise.all([connection, eventsConnection, workerConnection].map((c) => c.quit()));
    }
  },
};
