/**
 * The plans of the removal trim's reads (removeOnComplete / removeOnFail with a count or an age,
 * stores/typeorm/sql/complete-removing.ts beyondRule) at scale: `rows` finished tasks spread over
 * `types` types (1 in 10 FAILED, the rest SUCCEEDED) in one queue, then the count and the age query
 * of type t1 (1 / types of the rows), as the store sends them, with the server's plan and the rows it read.
 * `node -r ./test/support/register.js test/bench/profile/removal-trim-plan.ts <postgres|mariadb|sqlite> [rows] [types]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { fenceOf, TaskStatus } from '../../../libs/priority-queue/src/core/task';
import { TypeOrmTaskStore } from '../../../libs/priority-queue/src/stores/typeorm';
import { startServers } from '../lib/servers';
import { nowMs } from '../lib/stats';
import type { ServerKind } from '../target';

async function main(): Promise<void> {
  const kind = (process.argv[2] ?? 'postgres') as 'postgres' | 'mariadb' | 'sqlite';
  const rows = Number(process.argv[3] ?? 100_000);
  const types = Number(process.argv[4] ?? 10);
  const servers = await startServers(new Set<ServerKind>(kind === 'sqlite' ? [] : [kind]), () => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'pq-trim-'));
  let options: DataSourceOptions;
  if (kind === 'postgres') options = { type: 'postgres', url: servers.env.postgres!.url, logging: false };
  else if (kind === 'mariadb') {
    const m = servers.env.mariadb!;
    options = { type: 'mariadb', host: m.host, port: m.port, username: m.user, password: m.password, database: m.database, logging: false };
  } else options = { type: 'better-sqlite3', database: join(dir, 'trim.sqlite'), logging: false };
  const ds = new DataSource(options);
  await ds.initialize();
  const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'trim_' });
  try {
    await store.init();
    await store.create([
      { id: 'template', idempotencyKey: null, type: 't0', payload: { x: 1 }, priority: 0, providerKey: 't0', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 1, idempotent: true },
    ]);
    const claim = await store.claimSubmissions({ owner: 'o', limit: 1, leaseMs: 60_000 });
    await store.complete(fenceOf(claim.claimed[0]), { status: TaskStatus.SUCCEEDED, result: null });
    const p = (i: number) => (kind === 'postgres' ? `$${i}` : '?');
    const quote = (c: string) => (kind === 'mariadb' ? `\`${c}\`` : `"${c}"`);
    const cols: string[] =
      kind === 'sqlite'
        ? ((await ds.query(`SELECT name FROM pragma_table_info('trim_tasks')`)) as Array<{ name: string }>).map((r) => r.name)
        : ((await ds.query(
            `SELECT column_name AS name FROM information_schema.columns WHERE table_name = ${p(1)} AND table_schema = ${kind === 'postgres' ? 'current_schema()' : 'DATABASE()'}`,
            ['trim_tasks'],
          )) as Array<{ name: string }>).map((r) => r.name);
    const fixed = new Set(['seq', 'id', 'idempotency_key', 'type', 'status', 'finished_at']);
    const copied = cols.filter((c) => !fixed.has(c)).map(quote);
    const series =
      kind === 'postgres'
        ? `generate_series(1, ${rows}) AS g(n)`
        : `(WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${rows}) SELECT n FROM s) AS g`;
    const concat = (a: string, b: string) => (kind === 'mariadb' ? `CONCAT(${a}, ${b})` : `${a} || ${b}`);
    const t0 = nowMs();
    if (kind === 'mariadb') await ds.query('SET SESSION max_recursive_iterations = 10000000');
    await ds.query(
      `INSERT INTO trim_tasks (id, idempotency_key, type, status, finished_at, ${copied.join(', ')})
       SELECT ${concat("'r'", kind === 'postgres' ? 'g.n::text' : 'g.n')}, NULL, ${concat("'t'", kind === 'postgres' ? `(g.n % ${types})::text` : `g.n % ${types}`)},
         CASE WHEN g.n % 10 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END, t.finished_at - ${rows} + g.n, ${copied.map((c) => `t.${c}`).join(', ')}
       FROM trim_tasks t, ${series} WHERE t.id = 'template'`,
    );
    await ds.query(kind === 'mariadb' ? 'ANALYZE TABLE trim_tasks' : 'ANALYZE trim_tasks');
    console.log(`${kind}: ${rows} finished rows written in ${(nowMs() - t0).toFixed(0)} ms`);
    const queue = (store as unknown as { queue: string }).queue;
    const [{ f }] = (await ds.query(`SELECT MAX(finished_at) AS f FROM trim_tasks`)) as Array<{ f: number }>;
    const mine = `queue = ${p(1)} AND type = ${p(2)} AND status IN (${p(3)}) AND finished_at IS NOT NULL`;
    const queries: Array<[string, string, unknown[]]> = [
      ['count 100', `SELECT seq AS k FROM trim_tasks WHERE ${mine} ORDER BY finished_at DESC, seq DESC LIMIT 1000 OFFSET 100`, [queue, 't1', 'SUCCEEDED']],
      ['age', `SELECT seq AS k FROM trim_tasks WHERE ${mine} AND finished_at <= ${p(4)} ORDER BY finished_at LIMIT 1000`, [queue, 't1', 'SUCCEEDED', Number(f) - rows / 2]],
    ];
    for (const [name, text, params] of queries) {
      const explain = kind === 'postgres' ? 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ' : kind === 'mariadb' ? 'ANALYZE ' : 'EXPLAIN QUERY PLAN ';
      const plan = (await ds.query(explain + text, params)) as Array<Record<string, unknown>>;
      const t = nowMs();
      for (let i = 0; i < 5; i++) await ds.query(text, params);
      console.log(`-- ${name}: ${((nowMs() - t) / 5).toFixed(2)} ms per query (client wall, hint)`);
      for (const r of plan) console.log('   ' + (kind === 'postgres' ? r['QUERY PLAN'] : kind === 'sqlite' ? r.detail : JSON.stringify(r)));
    }
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
