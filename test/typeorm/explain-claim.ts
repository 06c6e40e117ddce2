/**
 * Not a test: prints EXPLAIN (ANALYZE, BUFFERS) of every statement of one claim (the plpgsql
 * function pq_claim, through auto_explain) on PostgreSQL with
 * 100,000 pending and 1,000,000 terminal rows, and the per-claim cost at 1,000 pending vs
 * 100,000 pending + 1,000,000 terminal (docs/TYPEORM.md quotes its output).
 * Run: node -r ./test/support/register.js test/typeorm/explain-claim.ts
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { fenceOf, TaskStatus, type NewTask } from '../../libs/priority-queue/src/core';
import { TypeOrmTaskStore } from 'nestjs-priority-queue/typeorm';
import { startPostgresServer } from '../support/servers/postgres-server';

const newTask = (i: number): NewTask => ({
  id: randomUUID(),
  idempotencyKey: null,
  type: 'noop',
  payload: { i },
  priority: (i % 21) - 10,
  providerKey: `p${i % 4}`,
  accountId: `a${i % 7}`,
  tenantId: `t${i % 13}`,
  concurrencyKey: null,
  delayMs: 0,
  timeoutMs: null,
  maxAttempts: 5,
  idempotent: true,
});

async function fill(store: TypeOrmTaskStore, n: number): Promise<void> {
  for (let i = 0; i < n; i += 5000) await store.create(Array.from({ length: Math.min(5000, n - i) }, (_, j) => newTask(i + j)));
}

/** Average ms of `rounds` claims of 16 (each followed by completing what it claimed). */
async function claimCost(store: TypeOrmTaskStore, rounds: number): Promise<number> {
  await store.claimSubmissions({ owner: 'warm', limit: 1, leaseMs: 60_000 }); // merges the backlog
  let total = 0;
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 16, leaseMs: 60_000 });
    total += performance.now() - t;
    for (const c of claimed) await store.complete(fenceOf(c), { status: TaskStatus.SUCCEEDED, result: null });
  }
  return total / rounds;
}

async function main(): Promise<void> {
  const server = await startPostgresServer();
  const ds = new DataSource({ type: 'postgres', url: server.url } as never);
  await ds.initialize();
  try {
    const small = new TypeOrmTaskStore({ dataSource: ds, queue: 'small' });
    await small.init();
    await fill(small, 1000);
    const costSmall = await claimCost(small, 50);

    const big = new TypeOrmTaskStore({ dataSource: ds, queue: 'big' });
    await big.init();
    // 1,000,000 terminal rows of the same queue, written directly (history)
    await ds.query(`INSERT INTO pq_tasks (id, queue, type, payload, priority, k1, k2, run_at, created_at, status, staged, lane_key,
        provider_key, account_id, tenant_id, version, attempts, max_attempts, idempotent, poll_errors, cancel_requested, updated_at, finished_at)
      SELECT 'old-' || g, 'big', 'noop', '{}', 0, 0, 0, 1700000000000, 1700000000000, 'SUCCEEDED', 0, md5(g::text),
        'p' || (g % 4), 'a' || (g % 7), 't' || (g % 13), 3, 0, 5, 1, 0, 0, 1700000000000, 1700000000000 + g
      FROM generate_series(1, 1000000) g`);
    await fill(big, 100_000);
    await ds.query('VACUUM ANALYZE pq_tasks');
    await ds.query('VACUUM ANALYZE pq_lanes');
    const costBig = await claimCost(big, 50);
    console.log(`per-claim cost (16 per claim, 50 claims): 1,000 pending: ${costSmall.toFixed(2)} ms; 100,000 pending + 1,000,000 terminal: ${costBig.toFixed(2)} ms`);

    // The claim is ONE call of the plpgsql function pq_claim (schema v3): auto_explain prints
    // the plan of every statement it runs, sent to this connection as LOG notices.
    const qr = ds.createQueryRunner();
    const client = (await qr.connect()) as { on(e: 'notice', f: (m: { message?: string }) => void): void };
    const plans: string[] = [];
    client.on('notice', (m) => plans.push(String(m.message ?? '')));
    for (const set of [
      "LOAD 'auto_explain'",
      'SET auto_explain.log_min_duration = 0',
      'SET auto_explain.log_analyze = on',
      'SET auto_explain.log_buffers = on',
      'SET auto_explain.log_nested_statements = on',
      'SET client_min_messages = log',
    ]) {
      await qr.query(set);
    }
    const [k1, k2] = (big as unknown as { ctx: { db: { lockKeys: [number, number] } } }).ctx.db.lockKeys;
    const t = performance.now();
    const rows: unknown[] = await qr.query(`SELECT * FROM pq_claim('big', NULL, 16, 60000, 'explain', 'explain', ${k1}, ${k2}, 0, false)`);
    const ms = performance.now() - t;
    await qr.query('SET client_min_messages = notice');
    await qr.release();
    console.log(`\n-- one claim of 16 (one round trip, ${ms.toFixed(2)} ms, ${rows.length - 1} rows claimed): the statements inside pq_claim`);
    for (const p of plans) console.log(`\n${p.replace(/^duration: [0-9.]+ ms\s+/, '')}`);
    const [counts] = await ds.query(`SELECT count(*) FILTER (WHERE status = 'PENDING_SUBMIT') AS pending, count(*) FILTER (WHERE status = 'SUCCEEDED') AS done FROM pq_tasks WHERE queue = 'big'`);
    console.log(`\nrows in queue 'big': ${JSON.stringify(counts)}`);
  } finally {
    await ds.destroy();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
