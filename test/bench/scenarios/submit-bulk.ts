import { compact, inNamespace, makeJobs, submitAll, type Scenario } from '../scenario';
import { nowMs, perSecond } from '../lib/stats';

/** Bulk submit in chunks of the same size for everyone (submitMany / addBulk / insert / addJobs). */
export const submitBulk: Scenario = {
  id: 'submit-bulk',
  title: 'bulk submit',
  applies: () => true,
  metrics: (s) => [
    {
      metric: 'submit-bulk',
      label: `bulk submit, ${compact(s.submitBulk)} in ${compact(s.bulkChunk)}s (jobs/s)`,
      unit: 'jobs/s',
      better: 'higher',
    },
  ],
  run: (ctx) =>
    inNamespace(ctx, 'bulk', async () => {
      const jobs = makeJobs(ctx.sizes.submitBulk, ctx.seed);
      const t0 = nowMs();
      await submitAll(ctx.target, jobs, ctx.sizes.bulkChunk);
      const elapsed = nowMs() - t0;
      return [{ ...submitBulk.metrics(ctx.sizes, ctx.target)[0], value: perSecond(jobs.length, elapsed) }];
    }),
};
