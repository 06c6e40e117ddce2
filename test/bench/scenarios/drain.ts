import { compact, finishPhase, inNamespace, makeJobs, phaseLimit, profiled, submitAll, type Scenario } from '../scenario';
import { Countdown, nowMs, perSecond } from '../lib/stats';
import type { Profile } from '../target';

/**
 * Drain a prioritized backlog with one worker process at the scenario concurrency: wall time from
 * starting the worker to the last handler call. `drain` runs every target tuned, `drain-defaults`
 * with its out-of-the-box settings (target.ts Profile).
 */
function drainScenario(profile: Profile): Scenario {
  const scenario: Scenario = {
    id: profile === 'tuned' ? 'drain' : 'drain-defaults',
    title: `drain a backlog (${profile})`,
    profile,
    applies: () => true,
    metrics: (s) => [
      {
        ...profiled(profile, 'drain', `drain ${compact(s.drain)} at concurrency ${s.concurrency} (jobs/s)`),
        unit: 'jobs/s',
        better: 'higher',
      },
    ],
    run: (ctx) =>
      inNamespace(
        ctx,
        profile === 'tuned' ? 'drain' : 'draind',
        async () => {
          const jobs = makeJobs(ctx.sizes.drain, ctx.seed);
          await submitAll(ctx.target, jobs, ctx.sizes.bulkChunk);
          const done = new Countdown(jobs.length, phaseLimit(ctx.sizes, profile), 'drain');
          const t0 = nowMs();
          const worker = await ctx.target.startWorker({
            concurrency: ctx.sizes.concurrency,
            purpose: 'throughput',
            handler: () => done.tick(),
          });
          let phase: Awaited<ReturnType<typeof finishPhase>>;
          try {
            phase = await finishPhase(done, profile, t0);
          } finally {
            await worker.stop();
          }
          const { count, elapsedMs, note } = phase;
          return [{ ...scenario.metrics(ctx.sizes, ctx.target)[0], value: perSecond(count, elapsedMs), ...(note ? { note } : {}) }];
        },
        profile,
      ),
  };
  return scenario;
}

export const drain = drainScenario('tuned');
export const drainDefaults = drainScenario('defaults');
