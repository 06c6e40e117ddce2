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

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const ROUNDS = 60;

async function measure(conn: Redis, pending: number, lanes: number): Promise<void> {
  const store = new RedisTaskStore({ connection: conn, prefix: `cost${pending}x${lanes}x${Date.now()}` });
  await store.init();
  const r = seeded(pending + lanes);
  const total = pending + ROUNDS * 16;
  const inputs = Array.from({ length: total }, () =>
    noopTask({
      priority: PRIORITIES[Math.floor(r() * PRIORITIES.length)],
      providerKey: `p${Math.floor(r() * 3)}`,
      accountId: lanes > 1 ? `a${Math.floor(r() * lanes)}` : null,
    }),
  );
  const t0 = Date.now();
  for (let i = 0; i < inputs.length; i += 2000) await store.create(inputs.slice(i, i + 2000));
  const createMs = Date.now() - t0;
  const claims: number[] = [];
  const completes: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const a = await evalshaStats(conn);
    const { claimed } = await store.claimSubmissions({ owner: 'm', limit: 16, leaseMs: 30_000 });
    const b = await evalshaStats(conn);
    claims.push(b.usec - a.usec);
    for (const t of claimed) {
      const c0 = await evalshaStats(conn);
      await store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED });
      const c1 = await evalshaStats(conn);
      completes.push(c1.usec - c0.usec);
    }
  }
  console.log(
    `pending ${String(pending).padStart(6)}  lanes ${String(lanes * 3).padStart(4)}  create ${((createMs * 1000) / total).toFixed(1)} us/task (wall)` +
      `  claim(16) median ${median(claims)} us  complete median ${median(completes)} us (server time)`,
  );
}

(async () => {
  const srv = await startRedisServer();
  const conn = new Redis(srv.url);
  try {
    for (let rep = 0; rep < 2; rep++) {
      for (const lanes of [1, 100]) {
        await measure(conn, 1_000, lanes);
        await measure(conn, 100_000, lanes);
      }
    }
  } finally {
    conn.disconnect();
    await srv.stop();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
