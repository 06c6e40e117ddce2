import { join } from 'node:path';
import { TaskStatus } from '../../libs/priority-queue/src/core';
import { applyLimits, auditDir, createAll, noopTask, waitTerminal } from './support/fixtures';
import { killWorkerProcess, readAudit, startWorkerProcess, stopWorkerProcess } from './support/worker-pool';
import { useRedisWorkerEnv } from './support/redis-worker-env';

/**
 * DESIGN §4: a worker process killed with SIGKILL in the middle of its handlers. Its tasks stay
 * SUBMITTING with their slots held until the lease expires; then another process recovers them
 * (back to PENDING_SUBMIT, attempts + 1), runs them, and every slot is freed: nothing lost.
 */
const TASKS = 200;
const LEASE_MS = 1500;

describe('Redis store: a worker process killed mid-handler', () => {
  const env = useRedisWorkerEnv('crash');

  it('recovers its tasks after the lease expires, frees their slots, loses nothing', async () => {
    const { server, store, workers } = env;
    await applyLimits(store, [
      { kind: 'tenant', tenantId: 't1', quota: 3 },
      { kind: 'provider', providerKey: 'p', accountConcurrency: 4 },
    ]);
    await createAll(
      store,
      Array.from({ length: TASKS }, (_, i) =>
        noopTask({ tenantId: i % 2 ? 't1' : 't2', accountId: i % 3 ? 'a1' : 'a2', concurrencyKey: i % 10 === 0 ? 'k' : null }),
      ),
    );
    const dir = auditDir();
    const victim = await startWorkerProcess({
      url: server.url,
      prefix: 'crash',
      auditPath: join(dir, 'victim.log'),
      leaseMs: LEASE_MS,
      concurrency: 8,
      handlerMs: 60_000, // never finishes by itself
      reportStarts: true,
    });
    workers.push(victim);
    const until = Date.now() + 30_000;
    while (victim.started.length < 4 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(victim.started.length).toBeGreaterThanOrEqual(4);
    await killWorkerProcess(victim);

    // the dead process's tasks still hold their leases and slots
    const held = await store.list({ status: TaskStatus.SUBMITTING, limit: 100 });
    expect(held.length).toBeGreaterThanOrEqual(4);
    expect(held.map((t) => t.id).sort()).toEqual(expect.arrayContaining([...victim.started].sort()));
    const before = await store.stats();
    expect(before.inFlightByProvider).toEqual({ p: held.length });
    const leaseEnd = new Map(held.map((t) => [t.id, t.leaseUntil!]));

    const survivor = await startWorkerProcess({
      url: server.url,
      prefix: 'crash',
      auditPath: join(dir, 'survivor.log'),
      leaseMs: LEASE_MS,
      concurrency: 8,
      handlerMs: 2,
    });
    workers.push(survivor);
    await waitTerminal(store, TASKS, 90_000);

    const stats = await store.stats();
    expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(TASKS);
    expect(stats.inFlightByProvider).toEqual({});
    expect(stats.inFlightByAccount).toEqual([]);
    expect(stats.inFlightByTenant).toEqual({});
    expect(stats.inFlightByConcurrencyKey).toEqual({});
    for (const t of held) {
      const now = (await store.get(t.id))!;
      expect(now.status).toBe(TaskStatus.SUCCEEDED);
      expect(now.attempts).toBe(1); // its expired submit lease counted as one attempt
    }
    // re-claimed only after the dead lease expired
    await stopWorkerProcess(survivor);
    const restarts = readAudit([survivor.auditPath]).filter((a) => a.kind === 'S' && leaseEnd.has(a.id));
    expect(restarts.map((a) => a.id).sort()).toEqual([...leaseEnd.keys()].sort());
    for (const a of restarts) expect(a.time).toBeGreaterThanOrEqual(leaseEnd.get(a.id)!);
  }, 150_000);
});
