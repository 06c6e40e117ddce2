/**
 * Server cost of the PostgreSQL completeAndClaim (ONE call of complete_and_claim) against the same
 * work as two calls (the complete batch: one complete_leased call, then claim), alternated round
 * by round on ONE connection (no lock waits, no Worker: the same batch sizes whatever the Worker
 * does) with a backlog of `pending` tasks: the backend's CPU per task (/proc, clock ticks) and
 * pg_stat_statements' shared blocks per task. TREE=<checkout root> runs another checkout's store
 * (one without completeAndClaim runs the two calls only), e.g. the before tree of issue 12 §5.
 * `node -r <TREE>/test/support/register.js test/bench/profile/pg-combined-vs-apart.ts [pending=20000] [batch=48] [rounds=200]`
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { NewTask, Task, TaskStore } from '../../../libs/priority-queue/src/core';
import { startPostgresWithStatements } from './support/pg-stat-statements';

const root = process.env.TREE ? resolve(process.env.TREE) : resolve(__dirname, '..', '..', '..');
/* eslint-disable @typescript-eslint/no-require-imports */
const { DataSource } = require(require.resolve('typeorm', { paths: [root] })) as typeof import('typeorm');
const { fenceOf, TaskStatus } = require(join(root, 'libs/priority-queue/src/core')) as typeof import('../../../libs/priority-queue/src/core');
const { TypeOrmTaskStore } = require(join(root, 'libs/priority-queue/src/stores/typeorm')) as typeof import('../../../libs/priority-queue/src/stores/typeorm');
/* eslint-enable @typescript-eslint/no-require-imports */

const ticks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return Number(x[11]) + Number(x[12]);
};

async function main(): Promise<void> {
  const [pending, batch, rounds] = [Number(process.argv[2] ?? 20_000), Number(process.argv[3] ?? 48), Number(process.argv[4] ?? 200)];
  const { server: p, admin } = await startPostgresWithStatements({ trackAll: process.env.PQ_PGSS_TRACK === 'all' });
  const ds = new DataSource({ type: 'postgres', url: p.url, extra: { max: 1 } } as never);
  await ds.initialize();
  try {
    const store: TaskStore = new TypeOrmTaskStore({ dataSource: ds, tablePrefix: 'cx_' });
    const combined = typeof store.completeAndClaim === 'function' && process.env.PQ_MODE !== 'apart';
    await store.init();
    const task = (i: number): NewTask => ({ id: `t${i}`, idempotencyKey: null, type: 'job', payload: { i }, priority: i % 10, providerKey: 'job', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 3, idempotent: true });
    for (let i = 0; i < pending; i += 5000) await store.create(Array.from({ length: Math.min(5000, pending - i) }, (_, k) => task(i + k)));
    const pid = (await ds.query('SELECT pg_backend_pid() AS pid'))[0].pid as number;
    const req = { owner: 'w', limit: batch, leaseMs: 60_000 };
    const done = (ts: Task[]) => ts.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED, result: null } as const }));
    let held = (await store.claimSubmissions(req)).claimed;
    const cost = { apart: { cpu: 0, n: 0 }, combined: { cpu: 0, n: 0 } };
    const blocks = { apart: 0, combined: 0 };
    const blks = async () => Number((await admin.query(`SELECT coalesce(sum(shared_blks_hit + shared_blks_read), 0) AS b FROM pg_stat_statements WHERE query LIKE '%cx_%' AND toplevel`)).rows[0].b);
    await admin.query('SELECT pg_stat_statements_reset()');
    for (let r = 0; r < rounds * 2; r++) {
      const mode = r % 2 === 0 || !combined ? 'apart' : 'combined';
      const b0 = await blks();
      const t0 = ticks(pid);
      if (mode === 'apart') {
        await Promise.all(held.map((t) => store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED, result: null })));
        held = (await store.claimSubmissions(req)).claimed;
      } else {
        held = (await store.completeAndClaim!(done(held), req)).claim.claimed;
      }
      cost[mode].cpu += (ticks(pid) - t0) * 10_000;
      cost[mode].n += batch;
      blocks[mode] += (await blks()) - b0;
    }
    const rows = (
      await admin.query(`SELECT calls, total_exec_time AS ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q, toplevel FROM pg_stat_statements WHERE query LIKE '%cx_%' ORDER BY total_exec_time DESC LIMIT 30`)
    ).rows;
    console.log(`tree ${root}: ${pending} pending, batches of ${batch}`);
    for (const k of ['apart', 'combined'] as const) {
      if (cost[k].n > 0) console.log(`${k}: backend CPU ${(cost[k].cpu / cost[k].n).toFixed(1)} µs/task, ${(blocks[k] / cost[k].n).toFixed(2)} shared blocks/task`);
    }
    for (const r of rows) console.log(`${String(r.calls).padStart(5)} calls ${String(Math.round(r.ms * 1000 / r.calls)).padStart(7)} µs/call ${r.toplevel ? 'top' : '   '} ${r.q}`);
  } finally {
    await ds.destroy();
    await admin.end();
    await p.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
