/**
 * What the PostgreSQL store's claim and complete cost per task, statement by statement, in the
 * backlog scenario's world (scenarios/backlog.ts: `pending` tasks, optionally `finished` finished
 * rows seeded as its terminal row does), driven by the bench target's own Worker (throughput
 * settings, concurrency 16) until `claims` tasks ran. pg_stat_statements (track = all: the
 * statements inside the claim / complete functions too) gives per statement: calls, server time
 * and shared blocks (hit + read) per claimed task; /proc gives server and client CPU per task.
 *
 * TREE=<checkout root> loads the store and the bench target from another checkout (e.g. the
 * before tree) against the same server build, so two trees are compared statement by statement.
 * PQ_EXPLAIN=1 also prints, once the drain is done, the plans (auto_explain: ANALYZE, BUFFERS,
 * nested statements) of one claim of 32 and one complete batch on the same world.
 * PQ_PHASE=submit prices the submits instead (pending + claims tasks in chunks of 1,000, per task).
 * PQ_CONCURRENCY=1 PQ_PURPOSE=ordered drains at batch 1 (the order scenario's worker: no
 * prefetch, one claim of 1 task and one complete of 1 per task) instead of 16, throughput.
 *
 * `node -r ./test/support/register.js test/bench/profile/pg-claim-statements.ts [pending=1000] [finished=1000000] [claims=2000]`
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startPostgresWithStatements } from './support/pg-stat-statements';
import { runProfile } from './support/run-profile';

const root = process.env.TREE ? resolve(process.env.TREE) : resolve(__dirname, '..', '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = (p: string) => require(join(root, p));

function ticksOf(pid: number): { ppid: number; ticks: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}

function serverTicks(postmaster: number): number {
  let sum = 0;
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const t = ticksOf(pid);
    if (t && (pid === postmaster || t.ppid === postmaster)) sum += t.ticks;
  }
  return sum;
}

async function main(): Promise<void> {
  const pending = Number(process.argv[2] ?? 1_000);
  const finished = Number(process.argv[3] ?? 1_000_000);
  const claims = Number(process.argv[4] ?? 2_000);
  const { server: p, admin } = await startPostgresWithStatements({ trackAll: true });
  try {
    const backend = (await admin.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    const postmaster = ticksOf(backend)!.ppid;

    const { ourPostgresTarget } = load('test/bench/targets/ours-typeorm.ts');
    const { makeJobs, submitAll } = load('test/bench/scenario.ts');
    const { Countdown } = load('test/bench/lib/stats.ts');
    const env = { postgres: { host: p.host, port: p.port, user: p.user, password: p.password, database: p.database, url: p.url } };
    const target = ourPostgresTarget(env);
    await target.open();
    await target.begin('stmts', { profile: 'tuned' });
    try {
      if (finished > 0) await target.seedTerminal(finished);
      // PQ_PHASE=submit: the submits are measured (bulk, chunks of 1,000 as the bulk scenario), not the drain
      const submitPhase = process.env.PQ_PHASE === 'submit';
      if (submitPhase) await admin.query('SELECT pg_stat_statements_reset()');
      let s0 = serverTicks(postmaster);
      let c0 = process.cpuUsage();
      await submitAll(target, makeJobs(pending + claims, 7), submitPhase ? 1_000 : 5_000);
      // as the scenario: statistics only from the seed's ANALYZE (PQ_ANALYZE=1: fresh ones)
      if (process.env.PQ_ANALYZE === '1') await admin.query('VACUUM ANALYZE');
      let worker: { stop(): Promise<void> } = { stop: async () => undefined };
      if (!submitPhase) {
        await admin.query('SELECT pg_stat_statements_reset()');
        s0 = serverTicks(postmaster);
        c0 = process.cpuUsage();
        const done = new Countdown(claims, 300_000, 'drain');
        worker = await target.startWorker({
          concurrency: Number(process.env.PQ_CONCURRENCY ?? 16),
          purpose: process.env.PQ_PURPOSE ?? 'throughput',
          handler: () => done.tick(),
        });
        await done.arm();
      }
      const serverUs = (serverTicks(postmaster) - s0) * 10_000;
      const c = process.cpuUsage(c0);
      const rows = (
        await admin.query(
          `SELECT calls, total_exec_time AS ms, shared_blks_hit + shared_blks_read AS blks, shared_blks_read AS read, rows,
             regexp_replace(left(query, $1::int), '\\s+', ' ', 'g') AS q
           FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' AND calls > 0 ORDER BY total_exec_time DESC LIMIT 40`,
          [Number(process.env.PQ_QUERY_CHARS ?? 110)],
        )
      ).rows as Array<{ calls: string; ms: number; blks: string; read: string; rows: string; q: string }>;
      await worker.stop();
      console.log(`tree ${root}: ${pending} pending + ${finished} finished, ${claims} tasks run`);
      const per = process.env.PQ_PHASE === 'submit' ? pending + claims : claims;
      console.log(`server CPU ${(serverUs / per).toFixed(1)} µs/task, client CPU ${((c.user + c.system) / per).toFixed(1)} µs/task`);
      console.log('calls/task  µs/task  blks/task  read/task  statement');
      for (const r of rows) {
        console.log(
          `${(Number(r.calls) / per).toFixed(3).padStart(9)}  ${((r.ms * 1000) / per).toFixed(1).padStart(7)}  ${(Number(r.blks) / per).toFixed(1).padStart(9)}  ${(Number(r.read) / per).toFixed(2).padStart(9)}  ${r.q}`,
        );
      }
      if (process.env.PQ_EXPLAIN === '1') {
        await admin.query(`LOAD 'auto_explain'`);
        await admin.query(`SET auto_explain.log_min_duration = 0`);
        await admin.query(`SET auto_explain.log_analyze = on`);
        await admin.query(`SET auto_explain.log_buffers = on`);
        await admin.query(`SET auto_explain.log_nested_statements = on`);
        await admin.query(`SET client_min_messages = log`);
        admin.on('notice', (m) => console.log(m.message));
        const prefix = 'stmts_';
        const fns = (
          await admin.query(`SELECT p.oid::regprocedure::text AS f FROM pg_proc p WHERE proname LIKE $1 || '%'`, [prefix])
        ).rows.map((r: { f: string }) => r.f);
        console.log('functions:', fns.join(' '));
        const fn = (name: string) => fns.find((f: string) => f.startsWith(`${prefix}${name}(`))!.split('(')[0];
        const queue = (await admin.query(`SELECT queue FROM ${prefix}tasks LIMIT 1`)).rows[0].queue as string;
        await admin.query('BEGIN');
        console.log('--- one claim of 32');
        const got = (
          await admin.query(`SELECT o_kind, o_ctid::text AS tid, o_id, o_version FROM ${fn('claim')}($1, NULL, 32, 60000, 'x', 'b', 1, 1${process.env.TREE ? '' : ', 0, false'})`, [queue])
        ).rows.filter((r: { o_kind: number }) => Number(r.o_kind) === 1);
        console.log(`claimed ${got.length}`);
        console.log('--- one complete batch of those');
        await admin.query(
          `SELECT count(*) FROM ${fn('complete_leased')}($1, $2::bigint[], $3::varchar[], $4::tid[], $5::varchar[], $6::integer[], $7::varchar[], $8::text[], $9::text[], $10::integer[])`,
          [
            queue,
            got.map(() => null),
            got.map((r: { o_id: string }) => r.o_id),
            got.map((r: { tid: string }) => r.tid),
            got.map((r: { o_id: string }) => `b:${r.o_id}`),
            got.map((r: { o_version: number }) => r.o_version),
            got.map(() => 'SUCCEEDED'),
            got.map(() => null),
            got.map(() => null),
            got.map(() => 0),
          ],
        );
        await admin.query('ROLLBACK');
      }
    } finally {
      await target.end();
      await target.close();
      await admin.end();
    }
  } finally {
    await p.stop();
  }
}

runProfile(main);
