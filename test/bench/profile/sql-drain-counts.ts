/**
 * What does one drained task cost the database and the client, deterministically? Drains a
 * backlog with the core Worker on PostgreSQL or MariaDB and counts, per drained task, the
 * statements the drivers sent (pg Client.query, mysql2 Connection.query / execute: a TypeORM
 * transaction's BEGIN / COMMIT count as statements, as they are round trips), the NOTIFYs among
 * them, the transactions, and the client CPU time (process.cpuUsage), with the statements
 * grouped by their first words. Wall time is printed as a hint only (the machine is shared).
 * PQ_ADMISSION=1: the admission scenario's world instead (2 providers of 500/s burst 50, accounts of
 * concurrency 2, tenant quota 10, skewed draws; handlers hold 5 ms; pass concurrency 64, prefetch 0).
 * PQ_SLOWLOG=1 (MariaDB): also logs every statement of the drain in the server's slow query log
 * and prints, per statement shape, the server time and the rows examined per drained task.
 * `node -r ./test/support/register.js test/bench/profile/sql-drain-counts.ts <postgres|mariadb> [tasks] [concurrency] [prefetch]`
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import type { TaskStore } from '../../../libs/priority-queue/src/core/task-store.port';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { makeJobs } from '../scenario';
import { chunks, Countdown, nowMs, perSecond, sleep } from '../lib/stats';
import { randomInt, seededRandom } from '../lib/rng';
import type { ServerKind } from '../target';
import { runProfile } from './support/run-profile';

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
  if (/^\s*BEGIN(?! NOT ATOMIC)|START TRANSACTION/i.test(text)) tally.begins++; // MariaDB batches: BEGIN NOT ATOMIC ... START TRANSACTION ... END
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

/**
 * Turns MariaDB's slow query log on for every statement (long_query_time 0 for the sessions
 * opened after this: call it before the pool connects); returns the log file.
 */
async function startSlowLog(options: DataSourceOptions): Promise<string> {
  const ds = new DataSource(options);
  await ds.initialize();
  const [{ d }] = (await ds.query('SELECT @@datadir AS d')) as Array<{ d: string }>;
  const file = join(d, 'pq-drain-slow.log');
  await ds.query(`SET GLOBAL slow_query_log_file = '${file}'`);
  await ds.query('SET GLOBAL long_query_time = 0');
  await ds.query('SET GLOBAL slow_query_log = 1'); // a session copies both when it connects
  await ds.destroy();
  return file;
}

/** Server time (Query_time) and Rows_examined per statement shape, per drained task. */
async function printSlowLog(ds: DataSource, file: string, from: number, n: number): Promise<void> {
  await ds.query('SET GLOBAL slow_query_log = 0');
  const by = new Map<string, { count: number; ms: number; examined: number }>();
  let head: { ms: number; examined: number } | null = null;
  let text = '';
  const flush = () => {
    if (head && text) {
      const shape = text.replace(/\s+/g, ' ').replace(/`[a-z0-9_]*_(tasks|lanes|limits|resources|history|releases|marks|stage[a-z_]*)`/gi, '<$1>').trim().slice(0, 80);
      const e = by.get(shape) ?? { count: 0, ms: 0, examined: 0 };
      e.count++;
      e.ms += head.ms;
      e.examined += head.examined;
      by.set(shape, e);
    }
    head = null;
    text = '';
  };
  for (const line of readFileSync(file).subarray(from).toString('utf8').split('\n')) {
    const q = /^# Query_time: ([\d.]+) .*Rows_examined: (\d+)/.exec(line);
    if (q) {
      flush();
      head = { ms: Number(q[1]) * 1000, examined: Number(q[2]) };
    } else if (line.startsWith('# Time:') || line.startsWith('# User@Host')) flush();
    else if (!line.startsWith('#') && !line.startsWith('SET timestamp') && !line.startsWith('use ')) text += ' ' + line;
  }
  flush();
  console.log('server time per task (slow log), by statement: count/task, µs/task, rows examined/task');
  for (const [shape, e] of [...by].sort((a, b) => b[1].ms - a[1].ms).slice(0, 16))
    console.log(`  ${(e.count / n).toFixed(3).padStart(7)} ${((e.ms * 1000) / n).toFixed(0).padStart(6)} µs ${(e.examined / n).toFixed(1).padStart(8)}  ${shape}`);
}

async function main(): Promise<void> {
  const kind = (process.argv[2] ?? 'postgres') as 'postgres' | 'mariadb';
  const n = Number(process.argv[3] ?? 2000);
  const concurrency = Number(process.argv[4] ?? 16);
  const prefetch = Number(process.argv[5] ?? 2 * concurrency);
  instrumentDrivers();
  const servers = await startServers(new Set<ServerKind>([kind]), () => undefined);
  let options: DataSourceOptions;
  if (kind === 'postgres') {
    options = { type: 'postgres', url: servers.env.postgres!.url, poolSize: 20, logging: false };
  } else {
    const m = servers.env.mariadb!;
    options = { type: 'mariadb', host: m.host, port: m.port, username: m.user, password: m.password, database: m.database, poolSize: 20, logging: false };
  }
  const slowLog = process.env.PQ_SLOWLOG && kind === 'mariadb' ? await startSlowLog(options) : null;
  const ds = new DataSource(options);
  await ds.initialize();
  const store: TaskStore = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'cnt_' });
  try {
    await store.init();
    const registry = new TaskTypeRegistry();
    let done: Countdown | null = null;
    const admission = !!process.env.PQ_ADMISSION;
    registry.register('bench', {}, { run: admission ? () => sleep(5).then(() => void done?.tick()) : () => void done?.tick() }, 'bench');
    const queue = new PriorityQueue({ store, registry });
    if (admission) {
      for (const providerKey of ['provider-0', 'provider-1']) await store.setLimits({ kind: 'provider', providerKey, qps: 500, burst: 50, accountConcurrency: 2 });
      await store.setLimits({ kind: 'defaultTenant', quota: 10 });
    }
    const random = seededRandom(42);
    const world = (i: number) => {
      const account = Math.floor(200 * random() ** 2);
      return { providerKey: `provider-${account % 2}`, accountId: `account-${account}`, tenantId: `tenant-${Math.floor(50 * random() ** 2)}`, priority: randomInt(random, 0, 9), payload: { i } };
    };
    for (const c of chunks(makeJobs(n, 42), 1000))
      await queue.submitMany(c.map((j) => (admission ? { type: 'bench', ...world(j.i) } : { type: 'bench', priority: j.priority, payload: { i: j.i } })));
    done = new Countdown(n, 300_000, 'drain');
    const worker = new Worker({ store, registry, concurrency, prefetch, batchSize: concurrency + prefetch, leaseMs: 30_000 });
    let firstMs = 0;
    const tick = done.tick.bind(done);
    done.tick = () => {
      if (firstMs === 0) firstMs = nowMs() - t0;
      tick();
    };
    const slowFrom = slowLog ? statSync(slowLog).size : 0; // the drain's statements only
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
    if (slowLog) await printSlowLog(ds, slowLog, slowFrom, n);
  } finally {
    await store.close().catch(() => undefined);
    await ds.destroy();
    await servers.stop();
  }
}

runProfile(main);
