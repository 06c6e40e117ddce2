/**
 * The cost of one PostgreSQL claim of 1 task plus its complete (what the order scenario's worker
 * at concurrency 1 asks for each task), without the Worker around it: a store on a pool of ONE
 * connection claims 1 task and completes it, `rounds` times, with `pending` tasks pending. Per
 * round (= per task): the server backend's CPU time (/proc/<pid>/schedstat, ns: only that
 * backend, no autovacuum or other sessions), this process's CPU time (the store and the driver),
 * round trips (top-level statements), and per statement (pg_stat_statements, track = all: the
 * statements inside the functions too) calls, server time and shared blocks (hit + read).
 *
 * The store is the one of the tree it runs from: run it with that tree's register hook (the hook
 * maps the library's imports to its own tree), e.g. the before commit's checkout:
 * `cd /work/wt/bench-before && node -r ./test/support/register.js <this tree>/test/bench/profile/pg-claim-one.ts`
 *
 * `node -r ./test/support/register.js test/bench/profile/pg-claim-one.ts [pending=1000] [rounds=3000] [repeats=3]`
 * (PQ_HISTORY_LIMIT=n: the store's historyLimit; default the store's own. PQ_EXPLAIN=1: then the
 * plans of one more claim + complete, nested statements too: auto_explain, ANALYZE, BUFFERS)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plainTask } from '../../support/new-task';
import { startPostgresWithStatements } from './support/pg-stat-statements';
import { runProfile } from './support/run-profile';

const root = process.cwd();
// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = (p: string) => require(join(root, p));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { DataSource } = require(require.resolve('typeorm', { paths: [root] })) as typeof import('typeorm');

/** CPU time of a process in ns (the first field of /proc/<pid>/schedstat). */
function cpuNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

async function main(): Promise<void> {
  const pending = Number(process.argv[2] ?? 1_000);
  const rounds = Number(process.argv[3] ?? 3_000);
  const repeats = Number(process.argv[4] ?? 3);
  const { TypeOrmTaskStore } = load('libs/priority-queue/src/stores/typeorm/index.ts');
  const { fenceOf, TaskStatus } = load('libs/priority-queue/src/core/task.ts');
  const { server: p, admin } = await startPostgresWithStatements({ trackAll: true });
  const ds = new DataSource({ type: 'postgres', url: p.url, extra: { max: 1 }, logging: false });
  try {
    await ds.initialize();
    const historyLimit = process.env.PQ_HISTORY_LIMIT === undefined ? {} : { historyLimit: Number(process.env.PQ_HISTORY_LIMIT) };
    const store = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'one_', queue: 'one', ...historyLimit });
    await store.init();
    const total = pending + rounds * (repeats + 1);
    for (let i = 0; i < total; i += 1_000) {
      await store.create(
        Array.from({ length: Math.min(1_000, total - i) }, (_, k) => plainTask({ id: `t${i + k}`, payload: { i: i + k }, priority: (i + k) % 10, providerKey: 'job' })),
      );
    }
    await admin.query('VACUUM ANALYZE');
    const [{ pid }] = (await ds.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
    const one = async () => {
      const c = await store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 60_000 });
      if (c.claimed.length !== 1) throw new Error(`claimed ${c.claimed.length}`);
      await store.complete(fenceOf(c.claimed[0]), { status: TaskStatus.SUCCEEDED, result: null });
    };
    for (let i = 0; i < rounds; i++) await one(); // warm-up: plans cached, functions compiled
    console.log(`tree ${root}: ${pending}+ pending, ${rounds} rounds of claim 1 + complete 1, ${repeats} repeats, backend ${pid}`);
    for (let r = 0; r < repeats; r++) {
      await admin.query('SELECT pg_stat_statements_reset()');
      const s0 = cpuNs(pid);
      const c0 = process.cpuUsage();
      for (let i = 0; i < rounds; i++) await one();
      const server = (cpuNs(pid) - s0) / 1_000 / rounds;
      const cu = process.cpuUsage(c0);
      const client = (cu.user + cu.system) / rounds;
      const rows = (
        await admin.query(
          `SELECT calls, toplevel, total_exec_time AS ms, shared_blks_hit + shared_blks_read AS blks,
             regexp_replace(left(query, $1::int), '\\s+', ' ', 'g') AS q
           FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' AND calls > 0 ORDER BY toplevel DESC, total_exec_time DESC`,
          [Number(process.env.PQ_QUERY_CHARS ?? 100)],
        )
      ).rows as Array<{ calls: string; toplevel: boolean; ms: number; blks: string; q: string }>;
      const trips = rows.filter((x) => x.toplevel).reduce((s, x) => s + Number(x.calls), 0) / rounds;
      const blocks = rows.filter((x) => x.toplevel).reduce((s, x) => s + Number(x.blks), 0) / rounds;
      console.log(`repeat ${r + 1}: server CPU ${server.toFixed(1)} µs/task, client CPU ${client.toFixed(1)} µs/task, round trips ${trips.toFixed(2)}, shared blocks ${blocks.toFixed(2)} per task`);
      if (r === repeats - 1) {
        console.log('calls/task  µs/task  blks/task  statement (top level first)');
        for (const x of rows) {
          console.log(
            `${(Number(x.calls) / rounds).toFixed(3).padStart(9)}  ${((x.ms * 1000) / rounds).toFixed(1).padStart(7)}  ${(Number(x.blks) / rounds).toFixed(2).padStart(9)}  ${x.toplevel ? '' : '  '}${x.q}`,
          );
        }
      }
    }
    if (process.env.PQ_EXPLAIN === '1') {
      // the pool's one connection: auto_explain on it, its notices printed
      const pool = (ds.driver as unknown as { master: { connect(): Promise<{ query(s: string): Promise<unknown>; on(e: string, f: (m: { message?: string }) => void): void; release(): void }> } }).master;
      const client = await pool.connect();
      for (const s of ["LOAD 'auto_explain'", 'SET auto_explain.log_min_duration = 0', 'SET auto_explain.log_analyze = on', 'SET auto_explain.log_buffers = on', 'SET auto_explain.log_nested_statements = on', 'SET client_min_messages = log']) {
        await client.query(s);
      }
      client.on('notice', (m) => console.log(m.message));
      client.release();
      await one();
    }
  } finally {
    await ds.destroy().catch(() => undefined);
    await admin.end().catch(() => undefined);
    await p.stop();
  }
}

runProfile(main);
