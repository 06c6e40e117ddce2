import IORedis from 'ioredis';
import { inNamespace, type Measurement, type Scenario, type ScenarioContext, type Sizes } from '../scenario';
import { seededRandom } from '../lib/rng';
import { nowMs, percentile, sleep } from '../lib/stats';
import { startWireCounter, type WireCounter } from '../lib/wire-counter';
import type { BenchEnv, BenchTarget, RunningWorker } from '../target';
import { createTarget } from '../targets';

/** Quiet time after the workers started, before counting (connection set-up, first claims). */
const SETTLE_MS = 2_000;
/** Workers opened at once (each opens its own connections). */
const OPEN_AT_ONCE = 8;

/**
 * N idle workers (issue 15 §3), each with its own connections as if it were its own process
 * (another instance of the target attached to the namespace), every system with its
 * out-of-the-box settings (target.ts Profile `defaults`) and the scenario concurrency. After a
 * settle time, the workers' requests are counted for `idleSeconds` by a relay they connect
 * through (lib/wire-counter.ts: store round trips; a script call counts once); on Redis the
 * server's INFO commandstats also gives the commands it ran (scripts' own included). Then single
 * tasks are submitted one at a time, from this process's own connection, each after a random
 * pause, and the time from the submit call to the first handler start is the wake-up latency:
 * quiet must not cost latency.
 */
export const idle: Scenario = {
  id: 'idle',
  title: 'idle workers: store calls per second and wake-up latency (defaults)',
  profile: 'defaults',
  applies: (t) => t.server === 'redis' || t.server === 'postgres',
  metrics: (s, t) => s.idleWorkers.flatMap((n) => rows(s, t, n)),
  async run(ctx) {
    const out: Measurement[] = [];
    for (const n of ctx.sizes.idleWorkers) {
      try {
        out.push(...(await measure(ctx, n)));
      } catch (e) {
        const why = (e as Error)?.message?.split('\n')[0] ?? String(e);
        ctx.log(`idle x${n}: FAILED ${why}`);
        out.push(...rows(ctx.sizes, ctx.target, n).map((r) => ({ ...r, value: null, note: `FAILED: ${why}` })));
      }
    }
    return out;
  },
};

function rows(s: Sizes, t: BenchTarget, n: number): Array<Omit<Measurement, 'value'>> {
  const who = `idle: ${n} worker${n === 1 ? '' : 's'} x ${s.concurrency}`;
  return [
    { metric: `idle.${n}.calls`, label: `${who}, ${s.idleSeconds} s, defaults: store round trips (calls/s, all workers)`, unit: 'calls/s', better: 'lower' },
    ...(t.server === 'redis'
      ? [{ metric: `idle.${n}.redis-commands`, label: `${who}: Redis commands run, scripts' own included (calls/s)`, unit: 'calls/s', better: 'lower' as const }]
      : []),
    { metric: `idle.${n}.wake`, label: `${who}: wake-up of a single task, p50 of ${s.idleWakeups} (ms)`, unit: 'ms', better: 'lower' },
    { metric: `idle.${n}.wake-max`, label: `${who}: wake-up, max of ${s.idleWakeups} (ms)`, unit: 'ms', better: 'lower' },
  ];
}

async function measure(ctx: ScenarioContext, n: number): Promise<Measurement[]> {
  const namespace = ctx.namespace(`idle${n}`);
  const scoped: ScenarioContext = { ...ctx, namespace: () => namespace };
  return inNamespace(
    scoped,
    `idle${n}`,
    async () => {
      const upstream = ctx.target.server === 'redis' ? ctx.env.redis! : ctx.env.postgres!;
      const counter = await startWireCounter(ctx.target.server === 'redis' ? 'redis' : 'postgres', upstream);
      const started = new Map<number, number>();
      const waiting = new Map<number, () => void>();
      const idleWorkers: Array<{ target: BenchTarget; worker: RunningWorker | null }> = [];
      const admin = ctx.env.redis && ctx.target.server === 'redis' ? new IORedis(ctx.env.redis.url, { maxRetriesPerRequest: null }) : null;
      try {
        const env = throughCounter(ctx.env, ctx.target.server, counter);
        for (let k = 0; k < n; k += OPEN_AT_ONCE) {
          await Promise.all(
            Array.from({ length: Math.min(OPEN_AT_ONCE, n - k) }, async () => {
              const entry: { target: BenchTarget; worker: RunningWorker | null } = { target: createTarget(ctx.target.id, env), worker: null };
              idleWorkers.push(entry);
              await entry.target.open({ attach: true });
              await entry.target.begin(namespace, { attach: true, profile: 'defaults' });
              entry.worker = await entry.target.startWorker({
                concurrency: ctx.sizes.concurrency,
                purpose: 'ordered',
                handler: (job) => {
                  if (started.has(job.i)) return;
                  started.set(job.i, nowMs());
                  waiting.get(job.i)?.();
                },
              });
            }),
          );
        }
        await sleep(SETTLE_MS);
        const calls0 = counter.requests();
        const byCommand0 = counter.byCommand();
        const server0 = admin ? await redisCommands(admin) : 0;
        const t0 = nowMs();
        await sleep(ctx.sizes.idleSeconds * 1000);
        const calls1 = counter.requests();
        const server1 = admin ? await redisCommands(admin) : 0;
        const seconds = (nowMs() - t0) / 1000;
        const byCommand = counter.byCommand();

        const latencies: number[] = [];
        const random = seededRandom(ctx.seed + n);
        for (let i = 0; i < ctx.sizes.idleWakeups; i++) {
          await sleep(200 + random() * 800);
          const startedOnce = new Promise<void>((resolve, reject) => {
            waiting.set(i, resolve);
            setTimeout(() => reject(new Error(`idle x${n}: task ${i} did not start within ${ctx.sizes.phaseTimeoutMs} ms`)), ctx.sizes.phaseTimeoutMs).unref();
          });
          const t1 = nowMs();
          await ctx.target.submitOne({ i, priority: 5 });
          await startedOnce;
          latencies.push(started.get(i)! - t1);
        }

        const [calls, ...rest] = rows(ctx.sizes, ctx.target, n);
        const top = [...byCommand]
          .map(([cmd, c]) => [cmd, c - (byCommand0.get(cmd) ?? 0)] as const)
          .filter(([, c]) => c > 0)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 4)
          .map(([cmd, c]) => `${cmd} ${(c / seconds).toFixed(2)}/s`)
          .join(', ');
        const out: Measurement[] = [{ ...calls, value: (calls1 - calls0) / seconds, ...(top ? { note: top } : {}) }];
        for (const r of rest) {
          if (r.metric.endsWith('.redis-commands')) out.push({ ...r, value: (server1 - server0) / seconds });
          else if (r.metric.endsWith('.wake')) out.push({ ...r, value: percentile(latencies, 0.5) });
          else out.push({ ...r, value: Math.max(...latencies) });
        }
        ctx.log(`idle x${n}: ${(calls1 - calls0).toLocaleString('en-US')} calls in ${seconds.toFixed(1)} s${top ? ` (${top})` : ''}`);
        return out;
      } finally {
        for (const w of idleWorkers) {
          await w.worker?.stop().catch(() => undefined);
          await w.target.end({ detach: true }).catch(() => undefined);
          await w.target.close().catch(() => undefined);
        }
        admin?.disconnect();
        await counter.close();
      }
    },
    'defaults',
  );
}

/** The same servers, with the target's Redis or PostgreSQL reached through the counting relay. */
function throughCounter(env: BenchEnv, server: BenchTarget['server'], counter: WireCounter): BenchEnv {
  const out: BenchEnv = { ...env };
  if (env.redis && server === 'redis') out.redis = { host: counter.host, port: counter.port, url: `redis://${counter.host}:${counter.port}` };
  if (env.postgres && server === 'postgres') {
    const p = env.postgres;
    out.postgres = { ...p, host: counter.host, port: counter.port, url: `postgres://${p.user}:${p.password}@${counter.host}:${counter.port}/${p.database}` };
  }
  return out;
}

/** Commands the Redis server has run (INFO commandstats, without INFO itself). */
async function redisCommands(admin: IORedis): Promise<number> {
  const info = await admin.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') total += Number(m[2]);
  return total;
}
