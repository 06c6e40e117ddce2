import { compact, inNamespace, makeJobs, submitAll, type Scenario } from '../scenario';
import { Countdown, nowMs, perSecond } from '../lib/stats';
import type { BenchJob } from '../target';

const WAVES = 10;
const BACKLOG_SHARE = 0.8;

interface Start {
  i: number;
  priority: number;
  at: number;
}

/**
 * Start order at concurrency 1. 80% of the tasks wait as a backlog; the other 20% arrive in 10
 * waves while the worker drains, so a worker that prefetches or reads a stale candidate window
 * shows it. A start is a violation when a task of strictly higher priority was waiting: its
 * submit had resolved before the previous handler call ended (so it was in the queue before
 * this start was claimed) and it had not started yet.
 */
export const order: Scenario = {
  id: 'order',
  title: 'start order at concurrency 1',
  applies: () => true,
  metrics: (s) => [
    { metric: 'order.violations', label: `order: starts while a higher priority waited, ${compact(s.order)} (%)`, unit: '%', better: 'zero' },
    { metric: 'order.rate', label: 'order: throughput at concurrency 1 (jobs/s)', unit: 'jobs/s', better: 'higher' },
  ],
  run: (ctx) =>
    inNamespace(ctx, 'order', async () => {
      const all = makeJobs(ctx.sizes.order, ctx.seed);
      const backlogSize = Math.round(all.length * BACKLOG_SHARE);
      const backlog = all.slice(0, backlogSize);
      const waveSize = Math.ceil((all.length - backlogSize) / WAVES);
      const waves: BenchJob[][] = [];
      for (let k = backlogSize; k < all.length; k += waveSize) waves.push(all.slice(k, k + waveSize));
      const step = Math.floor(backlogSize / WAVES);
      const available = new Map<number, number>(); // job i -> time its submit resolved
      for (const j of backlog) available.set(j.i, Number.NEGATIVE_INFINITY);

      await submitAll(ctx.target, backlog, ctx.sizes.bulkChunk);
      const starts: Start[] = [];
      const seen = new Set<number>();
      const pendingSubmits: Promise<void>[] = [];
      let nextWave = 0;
      const done = new Countdown(all.length, ctx.sizes.phaseTimeoutMs, 'order');
      const t0 = nowMs();
      const worker = await ctx.target.startWorker({
        concurrency: 1,
        purpose: 'ordered',
        handler: (job) => {
          if (seen.has(job.i)) return; // a redelivery is not a new start
          seen.add(job.i);
          starts.push({ i: job.i, priority: job.priority, at: nowMs() });
          if (nextWave < waves.length && starts.length >= step * (nextWave + 1)) {
            const wave = waves[nextWave++];
            pendingSubmits.push(
              ctx.target.submitBulk(wave).then(() => {
                const at = nowMs();
                for (const j of wave) available.set(j.i, at);
              }),
            );
          }
          done.tick();
        },
      });
      let elapsed: number;
      try {
        await done.arm();
        elapsed = nowMs() - t0;
        await Promise.all(pendingSubmits);
      } finally {
        await worker.stop();
      }
      const violations = countViolations(starts, all, available);
      const [v, r] = order.metrics(ctx.sizes, ctx.target);
      return [
        { ...v, value: (100 * violations) / starts.length, note: `${violations} of ${starts.length} starts` },
        { ...r, value: perSecond(starts.length, elapsed) },
      ];
    }),
};

/** Offline replay of the start log (see the scenario's doc comment). */
export function countViolations(starts: readonly Start[], jobs: readonly BenchJob[], availableAt: Map<number, number>): number {
  const priorityOf = new Map(jobs.map((j) => [j.i, j.priority]));
  // jobs sorted by the time they became available, consumed as the replay advances
  const arrivals = [...availableAt.entries()].sort((a, b) => a[1] - b[1]);
  const waiting = new Array<number>(10).fill(0);
  const counted = new Set<number>();
  const started = new Set<number>();
  let next = 0;
  let violations = 0;
  for (let k = 0; k < starts.length; k++) {
    const horizon = k === 0 ? Number.NEGATIVE_INFINITY : starts[k - 1].at;
    while (next < arrivals.length && (arrivals[next][1] < horizon || arrivals[next][1] === Number.NEGATIVE_INFINITY)) {
      const i = arrivals[next++][0];
      if (!started.has(i)) {
        waiting[priorityOf.get(i)!]++;
        counted.add(i);
      }
    }
    const s = starts[k];
    for (let p = s.priority + 1; p < waiting.length; p++) {
      if (waiting[p] > 0) {
        violations++;
        break;
      }
    }
    started.add(s.i);
    if (counted.has(s.i)) waiting[s.priority]--;
  }
  return violations;
}
