import { compact, inNamespace, makeJobs, submitAll, type Scenario } from '../scenario';
import { Countdown, nowMs, perSecond } from '../lib/stats';

/**
 * Drain a prioritized backlog with one worker process at the scenario concurrency: wall time from
 * starting the worker to the last handler call.
 */
export const drain: Scenario = {
  id: 'drain',
  title: 'drain a backlog',
  applies: () => true,
  metrics: (s) => [
    {
      metric: 'drain',
      label: `drain ${compact(s.drain)} at concurrency ${s.concurrency} (jobs/s)`,
      unit: 'jobs/s',
      better: 'higher',
    },
  ],
  run: (ctx) =>
    inNamespace(ctx, 'drain', async () => {
      const jobs = makeJobs(ctx.sizes.drain, ctx.seed);
      await submitAll(ctx.target, jobs, ctx.sizes.bulkChunk);
      const done = new Countdown(jobs.length, ctx.sizes.phaseTimeoutMs, 'drain');
      const t0 = nowMs();
      const worker = await ctx.target.startWorker({
        concurrency: ctx.sizes.concurrency,
        purpose: 'throughput',
        handler: () => done.tick(),
      });
      let elapsed: number;
      try {
        await done.arm();
        elapsed = nowMs() - t0;
      } finally {
        await worker.stop();
      }
      return [{ ...drain.metrics(ctx.sizes, ctx.target)[0], value: perSecond(jobs.length, elapsed) }];
    }),
};
