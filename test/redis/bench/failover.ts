/**
 * Local measure (not a test): what a Redis Cluster failover costs the queue, with asynchronous
 * replication and with waitForReplicas (WAIT 1), on a 3-master cluster on loopback.
 *
 *   node -r ./test/support/register.js test/redis/bench/failover.ts [--failovers=10] [--rate=200] [--modes=async,wait]
 *     [--lease=5000] [--wait-timeout=1000] [--partition-ms=0]
 *
 * Per mode: 3 worker processes (concurrency 8, 5 ms handlers, lease --lease ms) drain one queue while a
 * producer submits `rate` tasks/s (one create call every 50 ms) with concurrency keys of limit 1.
 * Every ~3 s the queue's current master is SIGKILLed (cluster-node-timeout 2 s); once its replica
 * took over, the killed node is restarted and rejoins as the new master's replica. With
 * --partition-ms=N the master first loses its replica for N ms (its replication link killed and
 * the replica frozen with SIGSTOP until the master is dead), as when a host or its network fails
 * rather than one process: the master acknowledges writes the replica never gets. At the end:
 * - lost: submits the producer saw acknowledged whose task does not exist;
 * - submit errors: submits that failed (e.g. re-sent after a lost reply: duplicate id);
 * - re-run: tasks whose handler ran more than once (a finished task's complete lost);
 * - overlaps: two runs of one concurrency key at the same time (a claim lost);
 * - recovered: tasks taken back from an expired lease (claims whose reply was lost);
 * and, before the failovers, the drain throughput of 6,000 tasks by the same workers.
 */
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { TaskStatus, type NewTask } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import type { ReplicaWait } from '../../../libs/priority-queue/src/stores/redis/scripts';
import { startRedisCluster } from '../../support/servers/redis-cluster';
import { CLUSTER_CLIENT_OPTIONS } from '../support/cluster-client';
import { placeQueue } from '../support/cluster-placement';
import { auditDir, createAll, noopTask, waitTerminal } from '../support/fixtures';
import { readAudit, startWorkerProcess, stopWorkerProcess } from '../support/worker-pool';

const arg = (name: string, def: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;
const FAILOVERS = Number(arg('failovers', '10'));
const RATE = Number(arg('rate', '200'));
const MODES = arg('modes', 'async,wait').split(',');
const LEASE_MS = Number(arg('lease', '5000'));
const WAIT_TIMEOUT_MS = Number(arg('wait-timeout', '1000'));
const PARTITION_MS = Number(arg('partition-ms', '0'));
const KEYS = 100;
const WORKERS = 3;
const DRAIN = 6_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function measure(mode: string): Promise<string> {
  const wait: ReplicaWait | undefined = mode === 'wait' ? { replicas: 1, timeoutMs: WAIT_TIMEOUT_MS } : undefined;
  const cluster = await startRedisCluster({ nodeTimeoutMs: 2_000 });
  const client = new Cluster([...cluster.nodes], CLUSTER_CLIENT_OPTIONS);
  client.on('error', () => undefined);
  const p = await placeQueue(cluster, 'fb', 'q', (await cluster.masters())[0]);
  const store = new RedisTaskStore({ connection: client, prefix: p.prefix, queue: p.queue, waitForReplicas: wait });
  await store.init();
  const dir = auditDir();
  const workers = await Promise.all(
    Array.from({ length: WORKERS }, (_, i) =>
      startWorkerProcess({
        cluster: [...cluster.nodes],
        prefix: p.prefix,
        queues: [p.queue],
        auditPath: join(dir, `w${i}.log`),
        leaseMs: LEASE_MS,
        concurrency: 8,
        handlerMs: 5,
        auditHandlers: true,
        waitForReplicas: wait,
      }),
    ),
  );
  try {
    let n = 0;
    const task = (): NewTask => noopTask({ concurrencyKey: `k${n++ % KEYS}` });
    // throughput without failures
    const t0 = Date.now();
    await createAll(store, Array.from({ length: DRAIN }, task), 500);
    await waitTerminal(store, DRAIN, 300_000);
    const drainRate = DRAIN / ((Date.now() - t0) / 1000);

    // failovers under a steady producer
    const acked = new Set<string>();
    const errors = new Map<string, number>();
    let producing = true;
    const producer = (async () => {
      while (producing) {
        const batch = Array.from({ length: Math.max(1, Math.round(RATE / 20)) }, task);
        void store.create(batch).then(
          (res) => res.forEach((r) => acked.add(r.task.id)),
          (e) => {
            const msg = (e instanceof Error ? e.message : String(e)).replace(/[0-9a-f-]{36}/g, '<id>').slice(0, 80);
            errors.set(msg, (errors.get(msg) ?? 0) + batch.length);
          },
        );
        await sleep(50);
      }
    })();
    const promotions: number[] = [];
    for (let i = 0; i < FAILOVERS; i++) {
      await sleep(3_000);
      const master = await cluster.masterOf(p.slot);
      const [replica] = await cluster.replicasOf(master);
      if (PARTITION_MS > 0) {
        await cluster.admin(master).call('CLIENT', 'KILL', 'TYPE', 'replica');
        cluster.signal(replica, 'SIGSTOP');
        await sleep(PARTITION_MS);
      }
      await cluster.kill(master);
      if (PARTITION_MS > 0) cluster.signal(replica, 'SIGCONT');
      const killed = Date.now();
      while ((await cluster.masterOf(p.slot)).port !== replica.port) await sleep(50);
      promotions.push(Date.now() - killed);
      await cluster.restart(master);
      await cluster.waitHealthy();
    }
    await sleep(2_000);
    producing = false;
    await producer;
    await sleep(3_000); // the last creates settle
    let lost = 0;
    const keyOf = new Map<string, string>();
    for (const id of acked) {
      const t = await store.get(id);
      if (!t) lost++;
      else keyOf.set(id, t.concurrencyKey!);
    }
    let terminal = 0;
    try {
      await waitTerminal(store, DRAIN + acked.size - lost, 60_000);
    } catch (e) {
      terminal = -1;
    }
    await Promise.all(workers.map((w) => stopWorkerProcess(w)));

    const audit = readAudit(workers.map((w) => w.auditPath));
    const runs = new Map<string, Array<{ start: number; end: number }>>();
    for (const a of audit) if (a.kind === 'H') runs.set(a.id, [...(runs.get(a.id) ?? []), { start: a.time, end: a.end! }]);
    const reruns = [...runs.values()].filter((r) => r.length > 1).length;
    const byKey = new Map<string, Array<{ start: number; end: number }>>();
    for (const [id, rs] of runs) {
      const k = keyOf.get(id);
      if (k) byKey.set(k, [...(byKey.get(k) ?? []), ...rs]);
    }
    let overlaps = 0;
    for (const list of byKey.values()) {
      list.sort((a, b) => a.start - b.start);
      let end = -Infinity;
      for (const r of list) {
        if (r.start < end) overlaps++;
        end = Math.max(end, r.end);
      }
    }
    const recovered = audit.filter((a) => a.kind === 'X' && a.status === `${TaskStatus.SUBMITTING}->${TaskStatus.PENDING_SUBMIT}`).length;
    const stats = await store.stats();
    const promo = [...promotions].sort((a, b) => a - b);
    return [
      `${mode}: drain ${drainRate.toFixed(0)} tasks/s; ${FAILOVERS} failovers at ${RATE} submits/s (${acked.size} acknowledged), promotion ${promo[0]}-${promo[promo.length - 1]} ms after the kill`,
      `  lease ${LEASE_MS} ms${PARTITION_MS ? `, replica cut off ${PARTITION_MS} ms before each kill` : ''}${wait ? `, WAIT timeout ${WAIT_TIMEOUT_MS} ms` : ''}, worker errors ${workers.reduce((n, w) => n + (w.stderr().match(/\n/g)?.length ?? 0), 0)}: lost ${lost}, submit errors ${[...errors].map(([m, c]) => `${c} x "${m}"`).join('; ') || 0}, re-run ${reruns}, overlaps ${overlaps}, recovered from expired leases ${recovered}` +
        `${terminal < 0 ? `, NOT all terminal: ${JSON.stringify(stats.byStatus)}` : ''}`,
    ].join('\n');
  } finally {
    await Promise.all(workers.map((w) => stopWorkerProcess(w)));
    await store.close();
    client.disconnect();
    await cluster.stop();
  }
}

(async () => {
  for (const mode of MODES) console.log(await measure(mode));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
