import { join } from 'node:path';
import { TaskStatus } from '../../libs/priority-queue/src/core';
import { applyLimits, auditDir, createAll, noopTask, waitTerminal } from './support/fixtures';
import { startWorkerProcess } from './support/worker-pool';
import { useRedisWorkerEnv } from './support/redis-worker-env';

/**
 * Redis (AOF on) restarted while two worker processes run: they reconnect by themselves
 * (ioredis), reload the scripts (NOSCRIPT -> EVAL), re-subscribe, and every task still reaches a
 * terminal status with no slot left in use.
 */
const TASKS = 1500;

describe('Redis store: redis-server restarted under running workers', () => {
  const env = useRedisWorkerEnv('restart', { appendOnly: true });

  it('workers reconnect and every task reaches a terminal status', async () => {
    const { server, store, workers } = env;
    await applyLimits(store, [
      { kind: 'provider', providerKey: 'p', qps: 400, burst: 5, accountConcurrency: 6 },
      { kind: 'tenant', tenantId: 't1', quota: 4 },
    ]);
    await createAll(
      store,
      Array.from({ length: TASKS }, (_, i) => noopTask({ priority: i % 5, accountId: `a${i % 3}`, tenantId: i % 2 ? 't1' : 't2' })),
    );
    const dir = auditDir();
    workers.push(
      ...(await Promise.all(
        [0, 1].map((i) =>
          startWorkerProcess({
            url: server.url,
            prefix: 'restart',
            auditPath: join(dir, `w${i}.log`),
            leaseMs: 3000,
            concurrency: 8,
            handlerMs: 5,
          }),
        ),
      )),
    );
    const until = Date.now() + 60_000;
    let done = 0;
    while (done < 200 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      done = (await store.stats()).byStatus[TaskStatus.SUCCEEDED];
    }
    expect(done).toBeGreaterThanOrEqual(200);
    expect(done).toBeLessThan(TASKS);

    await server.restart();
    // the data written before the restart is back (AOF)
    const after = await store.stats();
    expect(after.byStatus[TaskStatus.SUCCEEDED]).toBeGreaterThanOrEqual(done);

    await waitTerminal(store, TASKS, 120_000);
    expect(workers.every((w) => w.child.exitCode === null && w.child.signalCode === null)).toBe(true);
    const stats = await store.stats();
    expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(TASKS);
    expect(stats.inFlightByProvider).toEqual({});
    expect(stats.inFlightByAccount).toEqual([]);
    expect(stats.inFlightByTenant).toEqual({});
  }, 200_000);
});
