/**
 * Local measure (not a test): server-side cost of one claim_submissions call (batch of 16, then
 * completing the 16) with 1,000 vs 100,000 pending tasks, read from Redis' INFO commandstats so
 * that noise of other processes on the machine stays out. Also the wall time of create.
 *   node -r ./test/support/register.js test/redis/bench/claim-cost.ts
 */
import Redis from 'ioredis';
import { TaskStatus, fenceOf } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { startRedisServer } from '../../support/servers/redis-server';
import { PRIORITIES, noopTask, seeded } from '../support/fixtures';

async function evalshaStats(conn: Redis): Promise<{ calls: number; usec: number }> {
  const line = (await conn.info('commandstats')).split('\n').find((l) => l.startsWith('cmdstat_evalsha:')) ?? '';
  const calls = Number(/calls=(\d+)/.exec(line)?.[1] ?? 0);
  const usec = Number(/usec=(\d+)/.exec(line)?.[1] ?? 0);
  return { calls, usec };
}

async function measure(conn: Redis, pending: number, lanes: number): Promise<void> {
  const store = new RedisTaskStore({ connection: conn, prefix: `cost${pending}x${lanes}` });
  await store.init();
  const r = seeded(pending + lanes);
  const inputs = Array.from({ length: pending }, () =>
    noopTask({
      priority: PRIORITIES[Math.floor(r() * PRIORITIES.length)],
      providerKey: `p${Math.floor(r() * 3)}`,
      accountId: lanes > 1 ? `a${Math.floor(r() * lanes)}` : null,
    }),
  );
  const t0 = Date.now();
  for (let i = 0; i < inputs.length; i += 2000) await store.create(inputs.slice(i, i + 2000));
  const createMs = Date.now() - t0;
  const rounds = 200;
  let claimUs = 0;
  let completeUs = 0;
  let completes = 0;
  for (let i = 0; i < rounds; i++) {
    const a = await evalshaStats(conn);
    const { claimed } = await store.claimSubmissions({ owner: 'm', limit: 16, leaseMs: 30_000 });
    const b = await evalshaStats(conn);
    claimUs += b.usec - a.usec;
    await Promise.all(claimed.map((t) => store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED })));
    const c = await evalshaStats(conn);
    completeUs += c.usec - b.usec;
    completes += claimed.length;
  }
  console.log(
    `pending ${String(pending).padStart(6)}  lanes ${String(lanes * 3).padStart(4)}  create ${((createMs * 1000) / pending).toFixed(1)} us/task (wall)` +
      `  claim(16) ${(claimUs / rounds).toFixed(1)} us  complete ${(completeUs / completes).toFixed(1)} us (server)`,
  );
}

(async () => {
  const srv = await startRedisServer();
  const conn = new Redis(srv.url);
  try {
    for (const lanes of [1, 100]) {
      await measure(conn, 1_000 + 200 * 16, lanes);
      await measure(conn, 100_000, lanes);
    }
  } finally {
    conn.disconnect();
    await srv.stop();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
