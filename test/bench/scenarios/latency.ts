import { compact, finishPhase, inNamespace, makeJobs, phaseLimit, profiled, type Scenario } from '../scenario';
import { Countdown, nowMs, percentile, sleep } from '../lib/stats';
import type { Profile } from '../target';

/**
 * Idle workers first; then tasks submitted at a steady pace; time from submit call to handler
 * start. `latency-defaults`: every target with its out-of-the-box settings.
 */
function latencyScenario(profile: Profile): Scenario {
  const scenario: Scenario = {
    id: profile === 'tuned' ? 'latency' : 'latency-defaults',
    title: `submit-to-start latency (${profile})`,
    profile,
    applies: () => true,
    metrics: (s) => [
      {
        ...profiled(profile, 'latency.p50', `latency p50, ${compact(s.latencyTasks)} tasks ${s.latencyGapMs} ms apart (ms)`),
        unit: 'ms',
        better: 'lower',
      },
      { ...profiled(profile, 'latency.p99', 'latency p99 (ms)'), unit: 'ms', better: 'lower' },
    ],
    run: (ctx) =>
      inNamespace(
        ctx,
        profile === 'tuned' ? 'lat' : 'latd',
        async () => {
          const jobs = makeJobs(ctx.sizes.latencyTasks, ctx.seed);
          const submittedAt = new Float64Array(jobs.length);
          const startedAt = new Float64Array(jobs.length).fill(Number.NaN);
          const done = new Countdown(jobs.length, phaseLimit(ctx.sizes, profile), 'latency');
          const worker = await ctx.target.startWorker({
            concurrency: ctx.sizes.concurrency,
            purpose: 'ordered',
            handler: (job) => {
              if (!Number.isNaN(startedAt[job.i])) return;
              startedAt[job.i] = nowMs();
              done.tick();
            },
          });
          let note: string | undefined;
          try {
            await sleep(500); // let the workers go idle
            const errors: unknown[] = [];
            const t0 = nowMs();
            for (let k = 0; k < jobs.length; k++) {
              const due = t0 + k * ctx.sizes.latencyGapMs;
              const wait = due - nowMs();
              if (wait > 0) await sleep(wait);
              submittedAt[k] = nowMs();
              ctx.target.submitOne(jobs[k]).catch((e) => errors.push(e));
            }
            // defaults: tasks not started at the limit count as infinitely late (p99 shows ∞)
            const phase = await finishPhase(done, profile, nowMs());
            if (phase.note) note = `${phase.count} of ${jobs.length} started by the ${phaseLimit(ctx.sizes, profile) / 1000} s limit, the rest count as infinitely late`;
            if (errors.length) throw errors[0];
          } finally {
            await worker.stop();
          }
          const lat = Array.from(startedAt, (s, k) => (Number.isNaN(s) ? Number.POSITIVE_INFINITY : s - submittedAt[k]));
          const [p50, p99] = scenario.metrics(ctx.sizes, ctx.target);
          return [
            { ...p50, value: percentile(lat, 0.5), ...(note ? { note } : {}) },
            { ...p99, value: percentile(lat, 0.99) },
          ];
        },
        profile,
      ),
  };
  return scenario;
}

export const latency = latencyScenario('tuned');
export const latencyDefaults = latencyScenario('defaults');
