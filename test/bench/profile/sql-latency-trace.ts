/**
 * Where does one task's submit-to-start time go on a SQL store, in one process? An idle core
 * Worker (concurrency 16, no prefetch, as the latency scenario runs it) on MariaDB, PostgreSQL or
 * SQLite; tasks submitted one at a time `gap` ms apart; prints p50 / p99 of submit -> handler
 * start, the statements per task between them (PQ_FLUSH_AT_COMMIT=0|1|2 sets MariaDB's
 * innodb_flush_log_at_trx_commit first; the test server starts with 0), and, for the last task, every statement sent from
 * its submit to its start with its time (PQ_SLOW_MS=x: every task that waited more than x ms, when
 * in the run it was submitted, and the slowest one's statements instead of the last one's).
 * `node -r ./test/support/register.js test/bench/profile/sql-latency-trace.ts <mariadb|postgres|sqlite> [tasks] [gapMs]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { PriorityQueue } from '../../../libs/priority-queue/src/core/queue';
import { TaskTypeRegistry } from '../../../libs/priority-queue/src/core/registry';
import { Worker } from '../../../libs/priority-queue/src/core/worker';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { nowMs, percentile, sleep } from '../lib/stats';
import type { ServerKind } from '../target';

const log: Array<{ at: number; sql: string }> = [];

function record(sql: unknown): void {
  const text = typeof sql === 'string' ? sql : ((sql as { text?: string; sql?: string })?.text ?? (sql as { sql?: string })?.sql ?? '');
  log.push({ at: nowMs(), sql: text.replace(/\s+/g, ' ').trim().slice(0, 110) });
}

function instrumentDrivers(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as { Client: { prototype: { query: (...a: unknown[]) => unknown } } };
  const pgQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...a: unknown[]) {
    record(a[0]);
    return pgQuery.apply(this, a);
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const base = require(join(dirname(require.resolve('mysql2')), 'lib/base/connection.js')) as { prototype: Record<string, (...a: unknown[]) => unknown> };
  for (const m of ['query', 'execute']) {
    const original = base.prototype[m];
    base.prototype[m] = function (this: unknown, ...a: unknown[]) {
      record(a[0]);
      return original.apply(this, a);
    };
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sqlite = require('better-sqlite3') as { prototype: { prepare: (s: string) => unknown } };
  const prepare = sqlite.prototype.prepare;
  sqlite.prototype.prepare = function (this: unknown, s: string) {
    record(s);
    return prepare.call(this, s);
  };
}

async function main(): Promise<void> {
  const kind = (process.argv[2] ?? 'mariadb') as 'mariadb' | 'postgres' | 'sqlite';
  const n = Number(process.argv[3] ?? 100);
  const gapMs = Number(process.argv[4] ?? 5);
  instrumentDrivers();
  const servers = await startServers(new Set<ServerKind>(kind === 'sqlite' ? [] : [kind]), () => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'pq-lat-'));
  let options: DataSourceOptions;
  if (kind === 'postgres') options = { type: 'postgres', url: servers.env.postgres!.url, poolSize: 20, logging: false };
  else if (kind === 'mariadb') {
    const m = servers.env.mariadb!;
    options = { type: 'mariadb', host: m.host, port: m.port, username: m.user, password: m.password, database: m.database, poolSize: 20, logging: false };
  } else options = { type: 'better-sqlite3', database: join(dir, 'lat.sqlite'), logging: false };
  const ds = new DataSource(options);
  await ds.initialize();
  const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'lat_' });
  const startedAt = new Float64Array(n).fill(Number.NaN);
  const submittedAt = new Float64Array(n);
  try {
    await store.init();
    const registry = new TaskTypeRegistry();
    registry.register('bench', {}, { run: ({ payload }) => void (startedAt[(payload as { i: number }).i] = nowMs()) }, 'bench');
    const queue = new PriorityQueue({ store, registry });
    const worker = new Worker({ store, registry, concurrency: 16, leaseMs: 30_000 });
    const flush = process.env.PQ_FLUSH_AT_COMMIT;
    if (kind === 'mariadb' && flush) await ds.query(`SET GLOBAL innodb_flush_log_at_trx_commit = ${Number(flush)}`);
    if (kind === 'mariadb') {
      // what one commit costs at this setting: 200 one-row autocommit INSERTs, one at a time
      await ds.query('CREATE TABLE IF NOT EXISTS lat_probe (id INT AUTO_INCREMENT PRIMARY KEY, v INT)');
      const t = nowMs();
      for (let i = 0; i < 200; i++) await ds.query('INSERT INTO lat_probe (v) VALUES (?)', [i]);
      const commitMs = (nowMs() - t) / 200;
      await ds.query('DROP TABLE lat_probe');
      console.log(`innodb_flush_log_at_trx_commit = ${(await ds.query('SELECT @@innodb_flush_log_at_trx_commit AS f'))[0].f}: ${commitMs.toFixed(2)} ms per one-row autocommit INSERT`);
    }
    await worker.start();
    await sleep(500);
    const fsyncs = async () =>
      kind === 'mariadb' ? Number(((await ds.query("SHOW GLOBAL STATUS LIKE 'Innodb_data_fsyncs'")) as Array<{ Value: string }>)[0].Value) : 0;
    const fsyncs0 = await fsyncs();
    const from = log.length;
    // as the latency scenario: one submit every gapMs, not waiting for the previous one
    const submits: Array<Promise<unknown>> = [];
    const t0 = nowMs();
    for (let i = 0; i < n; i++) {
      const wait = t0 + i * gapMs - nowMs();
      if (wait > 0) await sleep(wait);
      submittedAt[i] = nowMs();
      submits.push(queue.submit({ type: 'bench', priority: i % 10, payload: { i } }));
    }
    await Promise.all(submits);
    while (startedAt.some(Number.isNaN)) await sleep(5);
    await sleep(Math.max(50, gapMs));
    const statements = log.length - from;
    const fsyncCount = (await fsyncs()) - fsyncs0;
    await worker.stop();
    const lat = Array.from(startedAt, (s, k) => s - submittedAt[k]);
    console.log(`${kind}: ${n} tasks ${gapMs} ms apart: p50 ${percentile(lat, 0.5).toFixed(2)} ms, p99 ${percentile(lat, 0.99).toFixed(2)} ms; ${(statements / n).toFixed(2)} statements per task${kind === 'mariadb' ? `, ${(fsyncCount / n).toFixed(2)} InnoDB fsyncs per task` : ''}`);
    // PQ_SLOW_MS=x: every task slower than x ms (when in the run it was submitted, its wait), and
    // the worst one's trace instead of the last one's
    const slowMs = Number(process.env.PQ_SLOW_MS ?? Number.POSITIVE_INFINITY);
    let worst = -1;
    for (let k = 0; k < n; k++) {
      if (lat[k] <= slowMs) continue;
      console.log(`slow: task ${k} submitted at ${(submittedAt[k] - t0).toFixed(1)} ms into the run, started ${lat[k].toFixed(1)} ms later`);
      if (worst < 0 || lat[k] > lat[worst]) worst = k;
    }
    const shown = worst < 0 ? n - 1 : worst;
    const t = submittedAt[shown];
    console.log(`${worst < 0 ? 'last' : 'slowest'} task: submitted at 0, started at ${(startedAt[shown] - t).toFixed(2)} ms`);
    const until = process.env.PQ_WINDOW_MS ? t + Number(process.env.PQ_WINDOW_MS) : startedAt[shown] + 0.01;
    for (const e of log) if (e.at >= t - 0.01 && e.at <= until) console.log(`  ${(e.at - t).toFixed(2).padStart(7)} ms  ${e.sql}`);
  } finally {
    await store.close().catch(() => undefined);
    await ds.destroy();
    await servers.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
