/**
 * What bounds the multi-process PostgreSQL drain (the bench's multi-process scenario: a backlog
 * of N tasks, then P worker processes at concurrency 16 each, test/bench/child.ts), for our
 * targets and graphile-worker interleaved on ONE server:
 * - CPU per task of the PostgreSQL server (postmaster and children), of the worker processes, and
 *   of this process (which only counts the children's reports), from /proc; on a two-core machine
 *   the drain is CPU-bound when their sum per task x jobs/s is near 2 cores;
 * - what the server's client backends were doing, sampled every 10 ms from pg_stat_activity by
 *   one extra connection (its own CPU is in the server figure): active on CPU, waiting for a lock
 *   (which: Lock/advisory, Lock/tuple, LWLock/...) or idle in transaction: how many backends were
 *   busy on average (not idle, i.e. not waiting for their client), and the share of each state.
 *
 * `node -r ./test/support/register.js test/bench/profile/pg-multi-process.ts [tasks=20000] [rounds=2] [targets=ours-postgres+roc,graphile-worker] [processes=4]`
 * (targets: any PostgreSQL bench target id: ours-postgres, ours-postgres+roc, graphile-worker, pg-boss)
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startPostgresServer } from '../../support/servers/postgres-server';
import type { ChildCommand } from '../child';
import { forkBenchChild, stopBenchChild } from '../lib/bench-children';
import { chunks, Countdown, nowMs } from '../lib/stats';
import { makeJobs } from '../scenario';
import type { BenchEnv, BenchTarget } from '../target';
import { createTarget } from '../targets';
import { interleavedRounds, printMeans } from './support/interleaved-rounds';
import { procTicks, ticksBetween, TICK_US, treeTicks } from './support/proc-cpu';
import { runProfile } from './support/run-profile';


/** Samples pg_stat_activity every 10 ms: counts of "state / wait" over the client backends but its own. */
function sampler(url: string): { stop(): Promise<Map<string, number>> } {
  const counts = new Map<string, number>();
  const client = new Client({ connectionString: url });
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ state: string | null; wt: string | null; w: string | null }>(
        `SELECT state, wait_event_type AS wt, wait_event AS w FROM pg_stat_activity
          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname = current_database()`,
      );
      counts.set('#samples', (counts.get('#samples') ?? 0) + 1);
      for (const r of rows) {
        if (r.state === 'idle') continue; // a pooled connection waiting for its client
        const key = r.state === 'active' ? (r.wt ? `waits ${r.wt}/${r.w}` : 'active (on CPU)') : `${r.state}${r.wt && r.wt !== 'Client' ? ` ${r.wt}/${r.w}` : ''}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await client.end();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return counts;
    },
  };
}

/** Transactions committed and rolled back in the database so far (pg_stat_database; statements outside a transaction count one each). */
async function transactions(url: string): Promise<number> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await c.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(rows[0].n);
  } finally {
    await c.end();
  }
}

interface Row {
  target: string;
  transactionsPerTask: number;
  jobsPerSec: number;
  pgUs: number;
  workersUs: number;
  parentUs: number;
  load: number;
  states: Map<string, number>;
}

async function drainOnce(id: string, env: BenchEnv, n: number, processes: number, round: number, postmaster: number): Promise<Row> {
  const target: BenchTarget = createTarget(id, env);
  await target.open();
  const ns = `mpp_${id.replace(/[^a-z]/g, '')}_${round}_${Date.now() % 100000}`;
  await target.begin(ns, { profile: 'tuned' });
  const children: ChildProcess[] = [];
  try {
    for (const c of chunks(makeJobs(n, 42), 1000)) await target.submitBulk(c);
    const seen = new Uint8Array(n);
    const done = new Countdown(n, 300_000, 'multi-process');
    const ready: Array<Promise<void>> = [];
    for (let p = 0; p < processes; p++) {
      const started = forkBenchChild({ kind: 'start', targetId: id, env, namespace: ns, concurrency: 16, profile: 'tuned' }, (ids) => {
        for (const i of ids) {
          if (!seen[i]) {
            seen[i] = 1;
            done.tick();
          }
        }
      });
      children.push(started.child);
      ready.push(started.ready);
    }
    await Promise.all(ready);
    const x0 = await transactions(env.postgres!.url);
    const pg0 = treeTicks(postmaster);
    const w0 = children.map((c) => procTicks(c.pid!)!.ticks);
    const me0 = process.cpuUsage();
    const states = sampler(env.postgres!.url);
    const t0 = nowMs();
    for (const c of children) c.send({ kind: 'go' } satisfies ChildCommand);
    await done.arm();
    const elapsed = nowMs() - t0;
    const pg1 = treeTicks(postmaster);
    const w1 = children.map((c) => procTicks(c.pid!)!.ticks);
    const me = process.cpuUsage(me0);
    const counted = await states.stop();
    await new Promise((r) => setTimeout(r, 600)); // backends report their counters at most every 500 ms
    const x1 = await transactions(env.postgres!.url);
    return {
      target: id,
      transactionsPerTask: (x1 - x0 - (counted.get('#samples') ?? 0)) / n, // the sampler's queries taken out
      jobsPerSec: (n * 1000) / elapsed,
      pgUs: (ticksBetween(pg0, pg1) * TICK_US) / n,
      workersUs: (w1.reduce((s, t, i) => s + t - w0[i], 0) * TICK_US) / n,
      parentUs: (me.user + me.system) / n,
      load: loadavg()[0],
      states: counted,
    };
  } finally {
    await Promise.all(children.map((c) => stopBenchChild(c)));
    await target.end();
    await target.close();
  }
}

/** Busy backends per sample on average (not idle), and what they were doing, as shares of the busy samples. */
function statesLine(states: Map<string, number>): string {
  const samples = states.get('#samples') ?? 1;
  const busy = [...states].filter(([k]) => k !== '#samples');
  const total = busy.reduce((s, [, x]) => s + x, 0);
  const shares = busy
    .sort((a, b) => b[1] - a[1])
    .slice(0, 7)
    .map(([k, v]) => `${k} ${((100 * v) / total).toFixed(0)}%`)
    .join(', ');
  return `${(total / samples).toFixed(2)} busy on average: ${shares}`;
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20_000);
  const rounds = Number(process.argv[3] ?? 2);
  const ids = (process.argv[4] ?? 'ours-postgres+roc,graphile-worker').split(',');
  const processes = Number(process.argv[5] ?? 4);
  const server = await startPostgresServer();
  try {
    const postmaster = Number(readFileSync(join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const env: BenchEnv = { postgres: { host: server.host, port: server.port, user: server.user, password: server.password, database: server.database, url: server.url } };
    const fake = ids.map((id) => ({ id }) as BenchTarget); // interleavedRounds orders by id only
    for (const id of ids) await drainOnce(id, env, Math.min(n, 4000), processes, 0, postmaster); // warm-up, not reported
    const rows = await interleavedRounds(
      fake,
      rounds,
      (t, r) => drainOnce(t.id, env, n, processes, r, postmaster),
      (row, r) =>
        `${row.target.padEnd(18)} round ${r}: ${row.jobsPerSec.toFixed(0).padStart(6)} jobs/s  PG ${row.pgUs.toFixed(1).padStart(6)} µs/task  workers ${row.workersUs.toFixed(1).padStart(6)}  parent ${row.parentUs.toFixed(1).padStart(5)}  total ${(row.pgUs + row.workersUs + row.parentUs).toFixed(1).padStart(6)} (x jobs/s = ${(((row.pgUs + row.workersUs + row.parentUs) * row.jobsPerSec) / 1e6).toFixed(2)} cores)  transactions/task ${row.transactionsPerTask.toFixed(3)}  load ${row.load.toFixed(2)}\n    backends: ${statesLine(row.states)}`,
    );
    printMeans(fake, rows, (mean) => `${mean((r) => r.jobsPerSec).toFixed(0).padStart(6)} jobs/s  PG ${mean((r) => r.pgUs).toFixed(1)}  workers ${mean((r) => r.workersUs).toFixed(1)}  total ${mean((r) => r.pgUs + r.workersUs + r.parentUs).toFixed(1)} µs/task`);
  } finally {
    await server.stop();
  }
}

runProfile(main);
