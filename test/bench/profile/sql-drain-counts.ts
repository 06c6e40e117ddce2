/**
 * What does one drained task cost the database and the client, deterministically? Drains a
 * backlog with the core Worker on PostgreSQL or MariaDB and counts, per drained task, the
 * statements the drivers sent (pg Client.query, mysql2 Connection.query / execute: a TypeORM
 * transaction's BEGIN / COMMIT count as statements, as they are round trips), the NOTIFYs among
 * them, the transactions, and the client CPU time (process.cpuUsage), with the statements
 * grouped by their first words. Wall time is printed as a hint only (the machine is shared).
 * `node -r ./test/support/register.js test/bench/profile/sql-drain-counts.ts <postgres|mariadb> [tasks] [concurrency] [prefetch]`
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import type { TaskStore } from '../../../libs/priority-queue/src/core/task-store.port';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { makeJobs } from '../scenario';
import { chunks, Countdown, nowMs, perSecond } from '../lib/stats';
import type { ServerKind } from '../target';

interface Tally {
  on: boolean;
  total: number;
  notifies: number;
  begins: number;
  byShape: Map<string, number>;
}

/** PQ_TRACE=n: prints the first n statements of the drain with their time since the start. */
const TRACE = Number(process.env.PQ_TRACE ?? 0);
let traceStart = 0;
const tally: Tally = { on: false, total: 0, notifies: 0, begins: 0, byShape: new Map() };

function count(sql: unknown): void {
  if (!tally.on) return;
  const text = typeof sql === 'string' ? sql : ((sql as { text?: string; sql?: string })?.text ?? (sql as { sql?: string })?.sql ?? '');
  tally.total++;
  if (/pg_notify|^\s*NOTIFY/i.test(text)) tally.notifies++;
  if (/^\s*(BEGIN|START TRANSACTION)/i.test(text)) tally.begins++;
  const shape = text
    .replace(/\s+/g, ' ')
    .replace(/"[a-z0-9_]*_(tasks|lanes|limits|resources|history|sweeps|releases|marks|stage[a-z_]*|schema_version)"/gi, '<$1>')
    .replace(/`[a-z0-9_]*_(tasks|lanes|limits|resources|history|sweeps|releases|marks|stage[a-z_]*|schema_version)`/gi, '<$1>')
    .trim()
    .slice(0, 90);
  tally.byShape.set(shape, (tally.byShape.get(shape) ?? 0) + 1);
  if (tally.total <= TRACE) console.log(`  ${(nowMs() - traceStart).toFixed(1).padStart(8)} ms  ${shape}`);
}

function instrumentDrivers(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as { Client: { prototype: { query: (...a: unknown[]) => unknown } } };
  const pgQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...a: unknown[]) {
    count(a[0]);
    return pgQuery.apply(this, a);
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const base = require(join(dirname(require.resolve('mysql2')), 'lib/base/connection.js')) as { prototype: Record<string, (...a: unknown[]) => unknown> };
  for (const m of ['query', 'execute']) {
    const original = base.prototype[m];
    base.prototype[m] = function (this: unknown, ...a: unknown[]) {
      count(a[0]);
      return original.apply(this, a);
    };
  }
}

/** CPU ms (user + system) per process of the server so far, from /proc (Linux, 10 ms ticks). */
function procCpuMs(pids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(pid, (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The server's processes: MariaDB's one, PostgreSQL's postmaster and all its children now. */
async function serverPids(ds: DataSource, kind: string): Promise<number[]> {
  if (kind === 'postgres') {
    const [{ pid }] = (await ds.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const postmaster = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const kids = readdirSync('/proc')
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
    return [postmaster, ...kids];
  }
  const [{ f }] = (await ds.query('SELECT @@pid_file AS f')) as Array<{ f: string }>;
  const file = f.startsWith('/') ? f : join(((await ds.query('SELECT @@datadir AS d')) as Array<{ d: string }>)[0].d, f);
  return [Number(readFileSync(file, 'utf8').trim())];
}

/** CPU ms the server used between two readings (a process new since the first counts from 0). */
async function serverCpuSince(ds: DataSource, kind: string, before: Map<number, number>): Promise<number> {
  let total = 0;
  for (const [pid, ms] of procCpuMs(await serverPids(ds, kind))) total += ms - (before.get(pid) ?? 0);
  return total;
}

async function main(): Promise<void> {
  const kind = (process.argv[2] ?? 'postgres') as 'postgres' | 'mariadb';
  const n = Number(process.argv[3] ?? 2000);
  const concurrency = Number(process.argv[4] ?? 16);
  const prefetch = Number(process.argv[5] ?? 2 * concurrency);
  instrumentDrivers();
  const servers = await startServers(new Set<ServerKind>([kind]), () => undefined);
  let ds: DataSource;
  if (kind === 'postgres') {
    ds = new DataSource({ type: 'postgres', url: servers.env.postgres!.url, poolSize: 20, logging: false });
  } else {
    const m = servers.env.mariadb!;
    ds = new DataSource({ type: 'mariadb', host: m.host, port: m.port, username: m.user, password: m.password, database: m.database, poolSize: 20, logging: false });
  }
  await ds.initialize();
  const store: TaskStore = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'cnt_' });
  try {
    await store.init();
    const registry = new TaskTypeRegistry();
    let done: Countdown | null = null;
    registry.register('bench', {}, { run: () => void done?.tick() }, 'bench');
    const queue = new PriorityQueue({ store, registry });
    for (const c of chunks(makeJobs(n, 42), 1000)) await queue.submitMany(c.map((j) => ({ type: 'bench', priority: j.priority, payload: { i: j.i } })));
    done = new Countdown(n, 300_000, 'drain');
    const worker = new Worker({ store, registry, concurrency, prefetch, batchSize: concurrency + prefetch, leaseMs: 30_000 });
    let firstMs = 0;
    const tick = done.tick.bind(done);
    done.tick = () => {
      if (firstMs === 0) firstMs = nowMs() - t0;
      tick();
    };
    const server0 = procCpuMs(await serverPids(ds, kind));
    tally.on = true;
    const cpu0 = process.cpuUsage();
    const t0 = nowMs();
    traceStart = t0;
    await worker.start();
    await done.arm();
    const elapsed = nowMs() - t0;
    await worker.stop();
    const cpu = process.cpuUsage(cpu0);
    tally.on = false;
    const serverMs = await serverCpuSince(ds, kind, server0);
    const per = (x: number) => (x / n).toFixed(3);
    console.log(
      `${kind}: ${n} tasks, concurrency ${concurrency}, prefetch ${prefetch}: statements/task ${per(tally.total)}, NOTIFY/task ${per(tally.notifies)}, transactions/task ${per(tally.begins)}, client CPU/task ${((cpu.user + cpu.system) / n).toFixed(0)} µs, server CPU/task ${((serverMs * 1000) / n).toFixed(0)} µs; first start after ${firstMs.toFixed(0)} ms, wall ${elapsed.toFixed(0)} ms = ${perSecond(n, elapsed).toFixed(0)} jobs/s (hint only)`,
    );
    for (const [shape, c] of [...tally.byShape].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`  ${per(c).padStart(7)}  ${shape}`);
  } finally {
    await store.close().catch(() => undefined);
    await ds.destroy();
    await servers.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
