/**
 * Issue 15's targets that wall-clock time cannot settle on a loaded machine, priced per operation
 * in load-independent counts, ours vs the peer on the same server, through the bench's own
 * targets (test/bench/targets: the same settings as `npm run bench`):
 * - `submit`: Redis single submit (our PriorityQueue.submit vs BullMQ Queue.add), one at a time;
 * - `order`: PostgreSQL drain of a backlog at concurrency 1 (ours vs graphile-worker, `ordered`);
 * - `latency`: PostgreSQL, idle workers (concurrency 16, `ordered`), tasks submitted `gap` ms
 *   apart: everything from a submit to its start (NOTIFY, wake, claim), per task.
 * Each case runs twice per target: directly (client CPU: process.cpuUsage; server CPU: Redis
 * INFO cpu / PostgreSQL /proc of the postmaster and its children; Redis INFO commandstats;
 * pg_stat_statements at its default track = top) and through the wire counter (round trips and bytes the
 * clients sent; the relay's own CPU is kept out of the direct pass). The servers are the bench's
 * (test/support/servers) started here directly, PostgreSQL restarted once with
 * pg_stat_statements preloaded. Wall time is printed as a hint only.
 * `node -r ./test/support/register.js test/bench/profile/per-op-costs.ts [submit|order|latency|all] [n] [gapMs]`
 * (PQ_PGSS_TRACK=all: pg_stat_statements also lists the statements run inside functions;
 * PQ_ONLY=ours|peer: one side only, e.g. under `node --cpu-prof`, then cpuprofile-top.ts.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { startRedisServer } from '../../support/servers/redis-server';
import { makeJobs, submitAll } from '../scenario';
import { Countdown, nowMs, percentile, sleep } from '../lib/stats';
import { startWireCounter, type WireCounter } from '../lib/wire-counter';
import { bullmqTarget } from '../targets/bullmq';
import { graphileWorkerTarget } from '../targets/graphile-worker';
import { ourRedisTarget } from '../targets/ours-redis';
import { ourPostgresTarget } from '../targets/ours-typeorm';
import { luaScripts } from '../../../libs/priority-queue/src/stores/redis/scripts';
import type { BenchEnv, BenchTarget } from '../target';
import { startPostgresWithStatements } from './support/pg-stat-statements';

type Mode = 'submit' | 'order' | 'latency';

interface Costs {
  roundTrips: number;
  bytes: number;
  clientUs: number;
  serverUs: number;
  /** Redis: commands the server ran (script-internal ones included) and their usec; PG: statements. */
  detail: Array<{ name: string; calls: number; us: number; blocks?: number }>;
  note: string;
}

/** Something that can read the server's CPU (µs) and its per-command or per-statement stats. */
interface ServerProbe {
  cpuUs(): Promise<number>;
  stats(): Promise<Map<string, { calls: number; us: number; blocks?: number }>>;
  reset(): Promise<void>;
}

function redisProbe(admin: IORedis): ServerProbe {
  const info = async (section: string) => (await admin.info(section)).split('\r\n');
  return {
    async cpuUs() {
      let us = 0;
      for (const l of await info('cpu')) {
        const m = /^used_cpu_(sys|user):([\d.]+)/.exec(l);
        if (m) us += Number(m[2]) * 1e6;
      }
      return us;
    },
    async stats() {
      const out = new Map<string, { calls: number; us: number }>();
      for (const l of await info('commandstats')) {
        const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(l);
        if (m && m[1] !== 'info' && m[1] !== 'config|resetstat') out.set(m[1], { calls: Number(m[2]), us: Number(m[3]) });
      }
      return out;
    },
    reset: async () => void (await admin.config('RESETSTAT')),
  };
}

function procCpuUs(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return 0;
  }
}

function pgProbe(admin: Client, postmaster: number): ServerProbe {
  // all of the server's processes, those that end during a pass included (their CPU is lost:
  // the targets keep their pools open for the whole pass, so no backend ends inside it)
  const kids = () =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          const s = readFileSync(`/proc/${d}/stat`, 'utf8');
          return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
  let base = new Map<number, number>();
  return {
    async cpuUs() {
      let us = 0;
      for (const pid of [postmaster, ...kids()]) us += procCpuUs(pid) - (base.get(pid) ?? 0);
      return us;
    },
    async stats() {
      const rows = (
        await admin.query(
          `SELECT regexp_replace(regexp_replace(query, '\\s+', ' ', 'g'), '"[a-z0-9_]*_(tasks|lanes|limits|history)"', '<\\1>', 'g') AS q,
                  calls, total_exec_time * 1000 AS us, shared_blks_hit + shared_blks_read + shared_blks_dirtied AS blocks
           FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'`,
        )
      ).rows as Array<{ q: string; calls: string; us: number; blocks: string }>;
      const out = new Map<string, { calls: number; us: number; blocks: number }>();
      for (const r of rows) {
        const key = r.q.slice(0, 100);
        const prev = out.get(key) ?? { calls: 0, us: 0, blocks: 0 };
        out.set(key, { calls: prev.calls + Number(r.calls), us: prev.us + Number(r.us), blocks: prev.blocks + Number(r.blocks) });
      }
      return out;
    },
    async reset() {
      await admin.query('SELECT pg_stat_statements_reset()');
      base = new Map([postmaster, ...kids()].map((p) => [p, procCpuUs(p)]));
    },
  };
}

/** Runs `body` (which does `n` operations) and prices one operation. */
async function price(
  n: number,
  probe: ServerProbe,
  counter: WireCounter | null,
  body: () => Promise<string>,
): Promise<Costs> {
  await probe.reset();
  const server0 = await probe.cpuUs();
  const rt0 = counter?.requests() ?? 0;
  const bytes0 = counter?.bytesSent() ?? 0;
  const cpu0 = process.cpuUsage();
  const note = await body();
  const cpu = process.cpuUsage(cpu0);
  const serverUs = (await probe.cpuUs()) - server0;
  const detail = [...(await probe.stats())]
    .map(([name, s]) => ({ name, calls: s.calls / n, us: s.us / n, ...(s.blocks === undefined ? {} : { blocks: s.blocks / n }) }))
    .sort((a, b) => b.us - a.us);
  return {
    roundTrips: counter ? (counter.requests() - rt0) / n : Number.NaN,
    bytes: counter ? (counter.bytesSent() - bytes0) / n : Number.NaN,
    clientUs: (cpu.user + cpu.system) / n,
    serverUs: serverUs / n,
    detail,
    note,
  };
}

/** submit: the queue is opened before and emptied after the priced window. */
async function priceSubmit(target: BenchTarget, n: number, ns: string, probe: ServerProbe, counter: WireCounter | null): Promise<Costs> {
  await target.open();
  await target.begin(ns);
  try {
    const jobs = makeJobs(n, 7);
    return await price(n, probe, counter, async () => {
      const t0 = nowMs();
      for (const j of jobs) await target.submitOne(j);
      return `${((n * 1000) / (nowMs() - t0)).toFixed(0)} submits/s (hint)`;
    });
  } finally {
    await target.end();
    await target.close();
  }
}

/** order / latency: backlog or idle worker set up outside the priced window where it should be. */
async function pricePg(mode: Mode, target: BenchTarget, n: number, gapMs: number, ns: string, probe: ServerProbe, counter: WireCounter | null): Promise<Costs> {
  await target.open();
  await target.begin(ns);
  try {
    const jobs = makeJobs(n, 11);
    if (mode === 'order') {
      await submitAll(target, jobs, 1000);
      let done: Countdown | null = null;
      return await price(n, probe, counter, async () => {
        done = new Countdown(n, 600_000, 'order');
        const t0 = nowMs();
        const worker = await target.startWorker({ concurrency: 1, purpose: 'ordered', handler: () => done!.tick() });
        await done.arm();
        const ms = nowMs() - t0;
        await worker.stop();
        return `${((n * 1000) / ms).toFixed(0)} jobs/s at concurrency 1 (hint)`;
      });
    }
    const startedAt = new Float64Array(n).fill(Number.NaN);
    const submittedAt = new Float64Array(n);
    const done = new Countdown(n, 600_000, 'latency');
    const worker = await target.startWorker({
      concurrency: 16,
      purpose: 'ordered',
      handler: (job) => {
        if (!Number.isNaN(startedAt[job.i])) return;
        startedAt[job.i] = nowMs();
        done.tick();
      },
    });
    try {
      await sleep(500);
      return await price(n, probe, counter, async () => {
        const t0 = nowMs();
        const submits: Array<Promise<void>> = [];
        for (let k = 0; k < n; k++) {
          const wait = t0 + k * gapMs - nowMs();
          if (wait > 0) await sleep(wait);
          submittedAt[k] = nowMs();
          submits.push(target.submitOne(jobs[k]));
        }
        await Promise.all(submits);
        await done.arm();
        const lat = Array.from(startedAt, (s, k) => s - submittedAt[k]);
        return `p50 ${percentile(lat, 0.5).toFixed(2)} ms, p99 ${percentile(lat, 0.99).toFixed(2)} ms (hint)`;
      });
    } finally {
      await worker.stop();
    }
  } finally {
    await target.end();
    await target.close();
  }
}

function show(label: string, c: Costs, rows = 8): void {
  const f = (x: number, d = 1) => (Number.isNaN(x) ? '-' : x.toFixed(d));
  console.log(`${label}: round trips ${f(c.roundTrips, 2)}, bytes sent ${f(c.bytes, 0)}, server CPU ${f(c.serverUs, 0)} µs, client CPU ${f(c.clientUs, 0)} µs per op; ${c.note}`);
  for (const d of c.detail.slice(0, rows))
    console.log(`    ${d.calls.toFixed(3).padStart(7)} calls ${d.us.toFixed(1).padStart(7)} µs${d.blocks === undefined ? '' : ` ${d.blocks.toFixed(1).padStart(6)} blks`}  ${d.name}`);
}

/** PQ_ONLY=ours|peer runs one side only (for a `node --cpu-prof` run of it); the peer is last. */
function only<T>(list: readonly T[]): T[] {
  const o = process.env.PQ_ONLY;
  return o === 'ours' ? list.slice(0, -1) : o === 'peer' ? list.slice(-1) : [...list];
}

/**
 * The fixed cost of one call of our scripts, whatever it does: `create` with no task and `time`
 * (the smallest script), in Redis' own usec per call (INFO commandstats).
 */
async function scriptFixedCost(admin: IORedis, calls: number): Promise<void> {
  const scripts = luaScripts();
  for (const name of ['create', 'time'] as const) {
    const { source, sha } = scripts[name];
    await admin.script('LOAD', source);
    await admin.config('RESETSTAT');
    for (let i = 0; i < calls; i++) await admin.evalsha(sha, 1, '{fixed:q}:seq', '{fixed:q}:', '', '0', '0');
    const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await admin.info('commandstats'));
    console.log(`  ${name}.lua (${(source.length / 1024).toFixed(1)} KB with its prelude and helpers) with no work: ${(Number(m![2]) / calls).toFixed(1)} µs per call`);
  }
}

async function main(): Promise<void> {
  const arg = process.argv[2] ?? 'all';
  const modes: Mode[] = arg === 'all' ? ['submit', 'order', 'latency'] : [arg as Mode];
  const nArg = process.argv[3] ? Number(process.argv[3]) : undefined;
  const gapMs = Number(process.argv[4] ?? 20);
  const stops: Array<() => Promise<void>> = [];
  try {
    for (const mode of modes) {
      const n = nArg ?? (mode === 'submit' ? 3000 : mode === 'order' ? 2000 : 200);
      if (mode === 'submit') {
        const r = await startRedisServer();
        stops.push(() => r.stop());
        const admin = new IORedis(r.url, { maxRetriesPerRequest: null });
        stops.push(async () => void admin.disconnect());
        const counter = await startWireCounter('redis', { host: r.host, port: r.port });
        stops.push(() => counter.close(200));
        const direct: BenchEnv = { redis: { host: r.host, port: r.port, url: r.url } };
        const relayed: BenchEnv = { redis: { host: counter.host, port: counter.port, url: `redis://${counter.host}:${counter.port}` } };
        const probe = redisProbe(admin);
        for (const [id, make] of only([['ours (Redis) submit', ourRedisTarget], ['BullMQ add', bullmqTarget]] as const)) {
          // warm-up (scripts loaded, JIT), then the direct and the relayed pass
          await priceSubmit(make(direct), 300, `w${id.length}`, probe, null);
          const cpu = await priceSubmit(make(direct), n, `d${id.length}`, probe, null);
          const wire = await priceSubmit(make(relayed), n, `r${id.length}`, probe, counter);
          show(id, { ...cpu, roundTrips: wire.roundTrips, bytes: wire.bytes }, 14);
        }
        await scriptFixedCost(admin, 2000);
        continue;
      }
      // PQ_PGSS_TRACK=all: statements inside functions too (our claim function's, graphile's
      // add_job's): their time is then also inside the calling statement's, so the rows no longer add up
      const { server: p, admin } = await startPostgresWithStatements({ trackAll: process.env.PQ_PGSS_TRACK === 'all' });
      stops.push(() => p.stop());
      stops.push(() => admin.end());
      const backend = (await admin.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const st = readFileSync(`/proc/${backend}/stat`, 'utf8');
      const postmaster = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      const probe = pgProbe(admin, postmaster);
      const counter = await startWireCounter('postgres', { host: p.host, port: p.port });
      stops.push(() => counter.close(200));
      const direct: BenchEnv = { postgres: { host: p.host, port: p.port, user: p.user, password: p.password, database: p.database, url: p.url } };
      const relayUrl = p.url.replace(`${p.host}:${p.port}`, `${counter.host}:${counter.port}`);
      const relayed: BenchEnv = { postgres: { ...direct.postgres!, host: counter.host, port: counter.port, url: relayUrl } };
      const label = mode === 'order' ? 'order, concurrency 1' : `latency, ${gapMs} ms apart`;
      for (const [id, make] of only<readonly [string, (env: BenchEnv) => BenchTarget]>([
        ['ours (PostgreSQL)', (env) => ourPostgresTarget(env)],
        ['ours (PostgreSQL) removeOnComplete', (env) => ourPostgresTarget(env, { removeOnComplete: true })],
        ['graphile-worker', graphileWorkerTarget],
      ])) {
        await pricePg(mode, make(direct), Math.min(n, 200), gapMs, `pw_${mode}${id.length}`, probe, null);
        const cpu = await pricePg(mode, make(direct), n, gapMs, `pd_${mode}${id.length}`, probe, null);
        const wire = await pricePg(mode, make(relayed), n, gapMs, `pr_${mode}${id.length}`, probe, counter);
        show(`${id} ${label}`, { ...cpu, roundTrips: wire.roundTrips, bytes: wire.bytes }, 16);
      }
    }
  } catch (e) {
    console.error(e);
    process.exitCode = 1;
  } finally {
    // a pool a target left open sees the server go: that is the end of the run, not an error
    process.on('uncaughtException', () => undefined);
    for (const s of stops.reverse()) await s().catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
