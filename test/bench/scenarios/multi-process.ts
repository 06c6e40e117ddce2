import type { ChildProcess } from 'node:child_process';
import { compact, finishPhase, inNamespace, makeJobs, phaseLimit, profiled, submitAll, type Scenario } from '../scenario';
import { Countdown, nowMs, perSecond } from '../lib/stats';
import type { ChildCommand } from '../child';
import { forkBenchChild, stopBenchChild } from '../lib/bench-children';
import type { Profile } from '../target';

/**
 * Multi-process drain: the backlog is written by this process, then N worker processes (each at
 * the scenario concurrency) drain it. Timing starts when every child is connected and told to
 * go, so process start-up is not counted. `multi-process-defaults`: out-of-the-box settings.
 */
function multiProcessScenario(profile: Profile): Scenario {
  const scenario: Scenario = {
    id: profile === 'tuned' ? 'multi-process' : 'multi-process-defaults',
    title: `multi-process drain (${profile})`,
    profile,
    applies: (t) => t.server === 'redis' || t.server === 'postgres',
    metrics: (s) => [
      {
        ...profiled(profile, 'multi-process', `drain ${compact(s.multiProcessTasks)} with ${s.processes} worker processes x ${s.concurrency} (jobs/s)`),
        unit: 'jobs/s',
        better: 'higher',
      },
    ],
    run: (ctx) => {
      const namespace = ctx.namespace(profile === 'tuned' ? 'mp' : 'mpd');
      return inNamespaceNamed(ctx, namespace, profile, async () => {
        const jobs = makeJobs(ctx.sizes.multiProcessTasks, ctx.seed);
        await submitAll(ctx.target, jobs, ctx.sizes.bulkChunk);
        const children: ChildProcess[] = [];
        const seen = new Uint8Array(jobs.length);
        let duplicates = 0;
        const done = new Countdown(jobs.length, phaseLimit(ctx.sizes, profile), 'multi-process');
        let failure: Error | null = null;
        try {
          const ready = [];
          for (let p = 0; p < ctx.sizes.processes; p++) {
            const started = forkBenchChild(
              { kind: 'start', targetId: ctx.target.id, env: ctx.env, namespace, concurrency: ctx.sizes.concurrency, profile },
              (ids) => {
                for (const i of ids) {
                  if (seen[i]) duplicates++;
                  else {
                    seen[i] = 1;
                    done.tick();
                  }
                }
              },
              (e) => {
                failure = e;
                done.fail(e);
              },
            );
            children.push(started.child);
            ready.push(started.ready);
          }
          await Promise.all(ready);
          const t0 = nowMs();
          for (const c of children) c.send({ kind: 'go' } satisfies ChildCommand);
          const { count, elapsedMs, note } = await finishPhase(done, profile, t0);
          if (failure) throw failure;
          const notes = [note, duplicates ? `${duplicates} duplicate starts` : undefined].filter(Boolean);
          return [
            {
              ...scenario.metrics(ctx.sizes, ctx.target)[0],
              value: perSecond(count, elapsedMs),
              ...(notes.length ? { note: notes.join('; ') } : {}),
            },
          ];
        } finally {
          await Promise.all(children.map((c) => stopBenchChild(c)));
        }
      });
    },
  };
  return scenario;
}

export const multiProcess = multiProcessScenario('tuned');
export const multiProcessDefaults = multiProcessScenario('defaults');

function inNamespaceNamed<T>(ctx: Parameters<Scenario['run']>[0], namespace: string, profile: Profile, fn: () => Promise<T>): Promise<T> {
  return inNamespace({ ...ctx, namespace: () => namespace }, 'mp', fn, profile);
}
