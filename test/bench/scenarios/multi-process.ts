import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { compact, finishPhase, inNamespace, makeJobs, phaseLimit, profiled, submitAll, type Scenario } from '../scenario';
import { Countdown, nowMs, perSecond } from '../lib/stats';
import type { ChildCommand, ChildMessage } from '../child';
import type { Profile } from '../target';

const REGISTER = join(__dirname, '..', '..', 'support', 'register.js');
const CHILD = join(__dirname, '..', 'child.ts');

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
            const child = fork(CHILD, [], { execArgv: ['-r', REGISTER], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
            children.push(child);
            ready.push(
              new Promise<void>((resolve, reject) => {
                child.on('message', (m: ChildMessage) => {
                  if (m.kind === 'ready') resolve();
                  else if (m.kind === 'started') {
                    for (const i of m.ids) {
                      if (seen[i]) duplicates++;
                      else {
                        seen[i] = 1;
                        done.tick();
                      }
                    }
                  } else if (m.kind === 'error') {
                    failure = new Error(`worker process: ${m.message}`);
                    reject(failure);
                    done.fail(failure);
                  }
                });
                child.once('exit', (code) => reject(new Error(`worker process exited with ${code} before it was ready`)));
              }),
            );
            const start: ChildCommand = {
              kind: 'start',
              targetId: ctx.target.id,
              env: ctx.env,
              namespace,
              concurrency: ctx.sizes.concurrency,
              profile,
            };
            child.send(start);
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
          await Promise.all(children.map((c) => stopChild(c)));
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

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    if (child.connected) child.send({ kind: 'stop' } satisfies ChildCommand);
    else child.kill('SIGTERM');
  });
}
