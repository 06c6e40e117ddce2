import { join } from 'node:path';
import { TaskStatus, type Task } from '../../libs/priority-queue/src/core';
import type { ReplicaWait } from '../../libs/priority-queue/src/stores/redis/scripts';
import { auditDir, createAll, noopTask, waitTerminal } from './support/fixtures';
import { useRedisClusterWorkerEnv } from './support/redis-cluster-worker-env';
import { readAudit, startWorkerProcess, stopWorkerProcess, type AuditLine } from './support/worker-pool';

/**
 * A master of a Redis Cluster SIGKILLed under load: 3 worker processes serve two queues, one on
 * the master that dies, one on another master. cluster-node-timeout is 2 s, so the other masters
 * mark the dead one failed and its replica wins the election after about 3 s (a kill, not
 * CLUSTER FAILOVER: a coordinated failover loses nothing and proves little). The workers ride it
 * out by themselves (ioredis Cluster options of support/cluster-client.ts); the killed node is
 * restarted and rejoins as a replica. Every task must end SUCCEEDED with no slot left in use, the
 * queue on the surviving master must see every handler exactly once, and the workers must still
 * be the ones that drain the failed-over queue. Every task has a concurrency key of limit 1.
 *
 * Asynchronous replication (the default) may lose writes the dead master acknowledged: a lost
 * complete runs a task again, a lost claim can start it a second time while its first run goes
 * on; so "each task once" and "never twice at once" are asserted on that queue only with
 * waitForReplicas (WAIT 1), where an acknowledged write is on the replica that takes over.
 * docs/REDIS.md "Failover" has the figures of test/redis/bench/failover.ts.
 */
const TASKS_PER_QUEUE = 2_000;
const KEYS = 60;
const WORKERS = 3;
const LEASE_MS = 10_000;

function handlerRuns(audit: readonly AuditLine[], ids: ReadonlySet<string>): Map<string, Array<{ start: number; end: number }>> {
  const runs = new Map<string, Array<{ start: number; end: number }>>();
  for (const a of audit) {
    if (a.kind !== 'H' || !ids.has(a.id)) continue;
    runs.set(a.id, [...(runs.get(a.id) ?? []), { start: a.time, end: a.end! }]);
  }
  return runs;
}

/** Pairs of handler runs of one concurrency key that overlapped in time. */
function overlaps(tasks: readonly Task[], runs: Map<string, Array<{ start: number; end: number }>>): string[] {
  const byKey = new Map<string, Array<{ id: string; start: number; end: number }>>();
  for (const t of tasks) {
    for (const r of runs.get(t.id) ?? []) byKey.set(t.concurrencyKey!, [...(byKey.get(t.concurrencyKey!) ?? []), { id: t.id, ...r }]);
  }
  const out: string[] = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.start - b.start);
    let last = list[0];
    for (const r of list.slice(1)) {
      if (r.start < last.end) out.push(`${key}: ${last.id} [${last.start},${last.end}] and ${r.id} [${r.start},${r.end}]`);
      if (r.end > last.end) last = r;
    }
  }
  return out;
}

function describeFailover(mode: string, waitForReplicas: ReplicaWait | undefined): void {
  describe(`Redis Cluster: a master killed under load (${mode})`, () => {
    // the test's own writes (the backlog) wait for the replica, so the kill cannot lose them
    const env = useRedisClusterWorkerEnv('fo', 2, { cluster: { nodeTimeoutMs: 2_000 }, store: { waitForReplicas: { replicas: 1, timeoutMs: 5_000 } } });

    it('the replica takes over, the workers reconnect by themselves, every task ends SUCCEEDED', async () => {
      const [victim, survivor] = env.queues;
      expect(victim.master.port).not.toBe(survivor.master.port);
      const tasks = await Promise.all(
        env.stores.map((store) =>
          createAll(store, Array.from({ length: TASKS_PER_QUEUE }, (_, i) => noopTask({ priority: i % 7, concurrencyKey: `k${i % KEYS}` }))),
        ),
      );
      const dir = auditDir();
      env.workers.push(
        ...(await Promise.all(
          Array.from({ length: WORKERS }, (_, i) =>
            startWorkerProcess({
              cluster: [...env.cluster.nodes],
              prefix: 'fo',
              queues: env.queues.map((q) => q.queue),
              auditPath: join(dir, `worker-${i}.log`),
              leaseMs: LEASE_MS,
              concurrency: 8,
              handlerMs: 10,
              auditHandlers: true,
              waitForReplicas,
            }),
          ),
        )),
      );
      // under load: a quarter of the victim's queue done
      const until = Date.now() + 60_000;
      while ((await env.stores[0].stats()).byStatus[TaskStatus.SUCCEEDED] < TASKS_PER_QUEUE / 4 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const [replica] = await env.cluster.replicasOf(victim.master);
      await env.cluster.kill(victim.master);
      const killedAt = Date.now();
      for (let i = 0; i < 600 && (await env.cluster.masterOf(victim.slot)).port !== replica.port; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await env.cluster.masterOf(victim.slot)).port).toBe(replica.port);
      const promotedAt = Date.now();
      await env.cluster.restart(victim.master); // rejoins as the new master's replica
      await env.cluster.waitHealthy();

      await Promise.all(env.stores.map((s) => waitTerminal(s, TASKS_PER_QUEUE, 120_000)));
      expect(env.workers.every((w) => w.child.exitCode === null && w.child.signalCode === null)).toBe(true);
      await Promise.all(env.workers.map((w) => stopWorkerProcess(w)));
      // no store call failed in a worker (the client options let every command wait for the new
      // master) but, with WAIT, a write the dead master ran before its WAIT answered: reported as
      // failed, since whether the replica has it is unknown
      const errors = env.workers.flatMap((w) => w.stderr().split('\n').filter(Boolean));
      const inFlightAtTheKill = /: (Command aborted due to connection close|Connection is closed\.)$/;
      expect(errors.filter((e) => !waitForReplicas || !inFlightAtTheKill.test(e))).toEqual([]);

      for (const store of env.stores) {
        const stats = await store.stats();
        expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(TASKS_PER_QUEUE);
        expect(stats.inFlightByProvider).toEqual({});
        expect(stats.inFlightByConcurrencyKey).toEqual({});
      }
      const audit = readAudit(env.workers.map((w) => w.auditPath));
      const runs = tasks.map((ts) => handlerRuns(audit, new Set(ts.map((t) => t.id))));
      // every task ran; the surviving master's queue exactly once each, never two of a key at once
      for (const r of runs) expect(r.size).toBe(TASKS_PER_QUEUE);
      expect([...runs[1].values()].filter((rs) => rs.length !== 1)).toEqual([]);
      expect(overlaps(tasks[1], runs[1])).toEqual([]);
      if (waitForReplicas) {
        // no acknowledged write was lost, none was given up: the failed-over queue too ran each task once
        expect([...runs[0].values()].filter((rs) => rs.length !== 1)).toEqual([]);
        expect(overlaps(tasks[0], runs[0])).toEqual([]);
      }
      // the workers that lived through the failover drained the failed-over queue after it
      const after = audit.filter((a) => a.kind === 'H' && runs[0].has(a.id) && a.time > promotedAt);
      expect(after.length).toBeGreaterThan(0);
      expect(new Set(after.map((a) => a.worker)).size).toBe(WORKERS);
      const reruns = [...runs[0].values()].filter((rs) => rs.length > 1).length;
      process.stdout.write(
        `failover (${mode}): promoted ${promotedAt - killedAt} ms after the kill; ${reruns} of ${TASKS_PER_QUEUE} tasks of the failed-over queue ran twice; ${overlaps(tasks[0], runs[0]).length} overlapping runs of one key\n`,
      );
    }, 240_000);
  });
}

describeFailover('asynchronous replication', undefined);
describeFailover('waitForReplicas: 1 replica', { replicas: 1, timeoutMs: 1_000 });
