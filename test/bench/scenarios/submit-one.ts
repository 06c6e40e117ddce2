import { compact, inNamespace, makeJobs, type Scenario } from '../scenario';
import { nowMs, perSecond } from '../lib/stats';

/** Submit one by one, each awaited before the next: the cost of one producer round trip. */
export const submitOne: Scenario = {
  id: 'submit-one',
  title: 'submit one by one (awaited)',
  applies: () => true,
  metrics: (s) => [
    { metric: 'submit-one', label: `submit one by one, ${compact(s.submitOne)} (jobs/s)`, unit: 'jobs/s', better: 'higher' },
  ],
  run: (ctx) =>
    inNamespace(ctx, 'one', async () => {
      const jobs = makeJobs(ctx.sizes.submitOne, ctx.seed);
      const t0 = nowMs();
      for (const job of jobs) await ctx.target.submitOne(job);
      const elapsed = nowMs() - t0;
      return [{ ...submitOne.metrics(ctx.sizes, ctx.target)[0], value: perSecond(jobs.length, elapsed) }];
    }),
};
