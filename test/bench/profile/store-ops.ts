/**
 * Time per store operation, without the worker: create a backlog in chunks, claim it all in
 * batches, complete every task; optionally with `pending` extra tasks left behind.
 * `node -r ./test/support/register.js test/bench/profile/store-ops.ts <memory|redis|postgres|mariadb|sqlite> [tasks] [batch] [pending]`
 */
import IORedis from 'ioredis';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { MemoryTaskStore } from '../../../libs/priority-queue/src/stores/memory';
import { RedisTaskStore } from '../../../libs/priority-queue/src/stores/redis/redis-task-store';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { fenceOf, TaskStatus, type NewTask, type Task } from '../../../libs/priority-queue/src/core/task';
import type { TaskStore } from '../../../libs/priority-queue/src/core/task-store.port';
import { startServers } from '../lib/servers';
import { makeJobs } from '../scenario';
import { chunks, nowMs } from '../lib/stats';
import type { ServerKind } from '../target';

/** Wraps a TypeORM query runner class so that every statement is timed, keyed by its SQL shape. */
const sqlTimes = new Map<string, { calls: number; ms: number }>();
function timeQueries(runnerClass: { prototype: { query: (...a: unknown[]) => Promise<unknown> } }): void {
  const original = runnerClass.prototype.query;
  runnerClass.prototype.query = async function (this: unknown, ...args: unknown[]) {
    const t = nowMs();
    try {
      return await original.apply(this, args);
    } finally {
      const key = String(args[0]).replace(/\s+/g, ' ').replace(/\$\d+|\?/g, '?').replace(/(\?, )+\?/g, '?..').slice(0, 110);
      const e = sqlTimes.get(key) ?? { calls: 0, ms: 0 };
      e.calls++;
      e.ms += nowMs() - t;
      sqlTimes.set(key, e);
    }
  };
}
function printQueries(phase: string): void {
  const rows = [...sqlTimes.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 10);
  if (rows.length) console.log(`  SQL of ${phase} (calls, total ms, ms/call):`);
  for (const [k, v] of rows) console.log(`    ${String(v.calls).padStart(6)} ${v.ms.toFixed(0).padStart(6)} ${(v.ms / v.calls).toFixed(2).padStart(6)}  ${k}`);
  sqlTimes.clear();
}

async function main(): Promise<void> {
  const kind = (process.argv[2] ?? 'postgres') as ServerKind;
  const n = Number(process.argv[3] ?? 5_000);
  const batch = Number(process.argv[4] ?? 16);
  const pending = Number(process.argv[5] ?? 0);
  const servers = await startServers(new Set([kind]), () => undefined);
  const cleanup: Array<() => Promise<unknown> | void> = [];
  let store: TaskStore;
  if (kind === 'memory') store = new MemoryTaskStore();
  else if (kind === 'redis') {
    const c = new IORedis(servers.env.redis!.url);
    cleanup.push(() => c.disconnect());
    store = new RedisTaskStore({ connection: c, prefix: 'prof' });
  } else {
    const e = servers.env;
    const options: DataSourceOptions =
      kind === 'postgres'
        ? { type: 'postgres', url: e.postgres!.url, poolSize: 20 }
        : kind === 'mariadb'
          ? { type: 'mariadb', host: e.mariadb!.host, port: e.mariadb!.port, username: e.mariadb!.user, password: e.mariadb!.password, database: e.mariadb!.database, poolSize: 20 }
          : process.env.SQLITE_DEFAULT_JOURNAL
            ? { type: 'better-sqlite3', database: `${e.sqliteDir}/prof.sqlite` }
            : {
                type: 'better-sqlite3',
                database: `${e.sqliteDir}/prof.sqlite`,
                enableWAL: true,
                prepareDatabase: (db: { pragma(s: string): unknown }) => {
                  db.pragma('synchronous = NORMAL');
                },
              };
    const ds = new DataSource(options);
    await ds.initialize();
    if (process.env.PROFILE_SQL) {
      if (kind === 'postgres') timeQueries(require('typeorm/driver/postgres/PostgresQueryRunner').PostgresQueryRunner);
      if (kind === 'mariadb') timeQueries(require('typeorm/driver/mysql/MysqlQueryRunner').MysqlQueryRunner);
      if (kind === 'sqlite') timeQueries(require('typeorm/driver/better-sqlite3/BetterSqlite3QueryRunner').BetterSqlite3QueryRunner);
    }
    cleanup.push(() => ds.destroy());
    store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'prof_' });
  }
  const news = (count: number, first: number, lowPriority: boolean): NewTask[] =>
    makeJobs(count, 42 + first, first).map((j) => ({
      id: `t${j.i}`, idempotencyKey: null, type: 'bench', payload: { i: j.i, p: j.priority },
      priority: lowPriority ? -1 : j.priority, providerKey: 'bench', accountId: null, tenantId: null,
      concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 5, idempotent: true,
    }));
  try {
    await store.init();
    if (pending > 0) for (const c of chunks(news(pending, 1_000_000, true), 5000)) await store.create(c);
    let t = nowMs();
    for (const c of chunks(news(n, 0, false), 1000)) await store.create(c);
    console.log(`${kind}: create ${n} in chunks of 1000: ${((nowMs() - t) * 1000 / n).toFixed(0)} µs/task`);
    printQueries('create');
    // the first claim may merge staged tasks: time it alone
    t = nowMs();
    const claimed: Task[] = [];
    const first = await store.claimSubmissions({ owner: 'prof', limit: batch, leaseMs: 30_000 });
    claimed.push(...first.claimed);
    console.log(`${kind}: first claim (batch ${batch}): ${(nowMs() - t).toFixed(1)} ms`);
    t = nowMs();
    let calls = 0;
    while (claimed.length < n) {
      const r = await store.claimSubmissions({ owner: 'prof', limit: batch, leaseMs: 30_000 });
      calls++;
      if (r.claimed.length === 0) break;
      claimed.push(...r.claimed);
    }
    const claimMs = nowMs() - t;
    console.log(`${kind}: claim in batches of ${batch} (${pending} lower-priority pending): ${(claimMs * 1000 / (claimed.length - first.claimed.length)).toFixed(0)} µs/task, ${(claimMs / calls).toFixed(2)} ms/call`);
    printQueries('claims');
    t = nowMs();
    for (const c of chunks(claimed, 16)) {
      await Promise.all(c.map((task) => store.complete(fenceOf(task), { status: TaskStatus.SUCCEEDED, result: null })));
    }
    console.log(`${kind}: complete (16 at once): ${((nowMs() - t) * 1000 / claimed.length).toFixed(0)} µs/task`);
    printQueries('completes');
    t = nowMs();
    for (const c of claimed.slice(0, 200)) await store.get(c.id);
    console.log(`${kind}: get (sequential): ${((nowMs() - t) * 1000 / 200).toFixed(0)} µs`);
  } finally {
    await store.close();
    for (const c of cleanup) await c();
    await servers.stop();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
