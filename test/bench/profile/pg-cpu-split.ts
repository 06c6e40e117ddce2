/**
 * CPU per drained task, split into the PostgreSQL server's processes and this Node process, for
 * our TypeORM store and graphile-worker, interleaved run by run on ONE server (the bench targets,
 * the drain scenario's steps: pre-submit N tasks in chunks of 1,000, start a throughput worker at
 * concurrency 16, wait for the last handler call).
 *
 * PostgreSQL CPU = utime + stime (/proc/<pid>/stat, clock ticks) of the postmaster and all its
 * children (backends, autovacuum, checkpointer...), sampled just before the worker starts and
 * right after the last handler call (before the worker stops, so the pool's backends still live;
 * a backend born in between is counted from zero, so graphile-worker's pool start-up is in its
 * figure). Node CPU = process.cpuUsage() over the same interval. On a shared machine per-task CPU
 * is the figure to compare, not jobs/s.
 *
 * `node -r ./test/support/register.js test/bench/profile/pg-cpu-split.ts [tasks=20000] [rounds=3] [targets=ours-postgres,graphile-worker]`
 * (targets: ours-postgres, ours-postgres+roc (removeOnComplete, BENCH_REMOVE_ON_COMPLETE), ours-tuned, graphile-worker)
 * (env OURS_PREFETCH=<x concurrency> / OURS_CLAIMS=<claims in flight>: our target with other
 * Worker settings than the benchmark's 2 / 1, as target id `ours-tuned`;
 * env CPU_PROF=<dir>: also writes a V8 CPU profile of each drain, submission excluded; analyse with
 * test/bench/profile/cpuprofile-top.ts)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { Session } from 'node:inspector/promises';
import { Client } from 'pg';
import { startPostgresServer } from '../../support/servers/postgres-server';
import { graphileWorkerTarget } from '../targets/graphile-worker';
import { ourPostgresTarget } from '../targets/ours-typeorm';
import { ourTarget } from '../targets/ours';
import { removeOnCompleteFromEnv } from '../targets/remove-on-complete';
import { DataSource } from 'typeorm';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import type { BenchEnv, BenchTarget } from '../target';
import { makeJobs } from '../scenario';
import { chunks, Countdown, nowMs } from '../lib/stats';
import { interleavedRounds, printMeans } from './support/interleaved-rounds';
import { ticksBetween, TICK_US, treeTicks } from './support/proc-cpu';
import { runProfile } from './support/run-profile';

/** Statements sent by every pg Client of this process (both targets use `pg`): round trips per task. */
let statements = 0;
const query = Client.prototype.query as (...a: unknown[]) => unknown;
(Client.prototype as unknown as { query: (...a: unknown[]) => unknown }).query = function (this: Client, ...a: unknown[]) {
  statements++;
  return query.apply(this, a);
};

interface Row {
  target: string;
  jobsPerSec: number;
  pgUs: number;
  nodeUs: number;
  nodeSysUs: number;
  statementsPerTask: number;
  load: number;
}

async function drainOnce(target: BenchTarget, n: number, round: number, postmaster: number): Promise<Row> {
  const ns = `cpu_${target.id.replace(/[^a-z]/g, '')}_${round}_${Date.now() % 100000}`;
  await target.begin(ns);
  try {
    for (const c of chunks(makeJobs(n, 42), 1000)) await target.submitBulk(c);
    let done: Countdown | null = null;
    done = new Countdown(n, 300_000, 'drain');
    const d = done;
    // CPU_PROF=<dir>: a V8 CPU profile of the drain only (submission excluded), one file per run
    const session = process.env.CPU_PROF ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    }
    const pg0 = treeTicks(postmaster);
    const cpu0 = process.cpuUsage();
    const st0 = statements;
    const t0 = nowMs();
    const worker = await target.startWorker({ concurrency: 16, purpose: 'throughput', handler: () => d.tick() });
    await d.arm();
    const elapsed = nowMs() - t0;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = treeTicks(postmaster);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(join(process.env.CPU_PROF!, `${ns}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    }
    await worker.stop();
    return {
      target: target.id,
      jobsPerSec: (n * 1000) / elapsed,
      pgUs: (ticksBetween(pg0, pg1) * TICK_US) / n,
      nodeUs: (cpu.user + cpu.system) / n,
      nodeSysUs: cpu.system / n,
      statementsPerTask: (statements - st0) / n,
      load: loadavg()[0],
    };
  } finally {
    await target.end();
  }
}

/** Our PostgreSQL target with the Worker settings from OURS_PREFETCH / OURS_CLAIMS. */
function tunedTarget(env: BenchEnv): BenchTarget {
  const sources = new Map<string, DataSource>();
  const prefix = (ns: string) => `${ns}_`.toLowerCase();
  return ourTarget({
    id: 'ours-tuned',
    label: 'ours (tuned worker)',
    server: 'postgres',
    tuning: 'profile only',
    throughputPrefetch: Number(process.env.OURS_PREFETCH ?? 2),
    throughputClaimsInFlight: Number(process.env.OURS_CLAIMS ?? 1),
    async open() {},
    async close() {
      for (const ds of sources.values()) await ds.destroy().catch(() => undefined);
    },
    async createStore(ns) {
      const ds = new DataSource({ type: 'postgres', url: env.postgres!.url, poolSize: 20, logging: false });
      await ds.initialize();
      sources.set(ns, ds);
      return new TypeOrmTaskStore({ dataSource: ds, tablePrefix: prefix(ns) });
    },
    async dropNamespace(ns) {
      const ds = sources.get(ns);
      if (!ds) return;
      const rows: Array<{ name: string }> = await ds.query(`SELECT tablename AS name FROM pg_tables WHERE tablename LIKE $1`, [`${prefix(ns)}%`]);
      for (const r of rows) await ds.query(`DROP TABLE IF EXISTS "${r.name}" CASCADE`);
      await ds.destroy();
      sources.delete(ns);
    },
  });
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20_000);
  const rounds = Number(process.argv[3] ?? 3);
  const ids = (process.argv[4] ?? 'ours-postgres,graphile-worker').split(',');
  const server = await startPostgresServer();
  try {
    const postmaster = Number(readFileSync(join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const env: BenchEnv = { postgres: { host: server.host, port: server.port, user: server.user, password: server.password, database: server.database, url: server.url } };
    const targetOf = (id: string): BenchTarget => {
      if (id === 'graphile-worker') return graphileWorkerTarget(env);
      if (id === 'ours-tuned') return tunedTarget(env);
      if (id === 'ours-postgres+roc') return ourPostgresTarget(env, { removeOnComplete: removeOnCompleteFromEnv() });
      if (id === 'ours-postgres') return ourPostgresTarget(env);
      throw new Error(`unknown target ${id}: ours-postgres, ours-postgres+roc, ours-tuned or graphile-worker`);
    };
    const targets = ids.map(targetOf);
    for (const t of targets) await t.open();
    // one warm-up drain each (JIT, plan caches, pg_class caches), not reported
    for (const t of targets) await drainOnce(t, Math.min(n, 2000), 0, postmaster);
    const rows = await interleavedRounds(
      targets,
      rounds,
      (t, r) => drainOnce(t, n, r, postmaster),
      (row, r) =>
        `${row.target.padEnd(16)} round ${r}: ${row.jobsPerSec.toFixed(0).padStart(6)} jobs/s  PG ${row.pgUs.toFixed(1).padStart(6)} µs/task  Node ${row.nodeUs.toFixed(1).padStart(6)} µs/task (sys ${row.nodeSysUs.toFixed(1)})  total ${(row.pgUs + row.nodeUs).toFixed(1).padStart(6)}  statements/task ${row.statementsPerTask.toFixed(3)}  load ${row.load.toFixed(2)}`,
    );
    printMeans(
      targets,
      rows,
      (mean) => `${mean((r) => r.jobsPerSec).toFixed(0).padStart(6)} jobs/s  PG ${mean((r) => r.pgUs).toFixed(1)}  Node ${mean((r) => r.nodeUs).toFixed(1)}  total ${mean((r) => r.pgUs + r.nodeUs).toFixed(1)} µs/task`,
    );
    for (const t of targets) await t.close();
  } finally {
    await server.stop();
  }
}

runProfile(main);
