/**
 * Local measure (not a test): what one Redis node carries, and how queues spread over a Cluster.
 *
 *   node -r ./test/support/register.js test/redis/bench/capacity.ts [--tasks=20000] [--queues=3]
 *
 * 1. One redis-server, one queue: `tasks` tasks created in batches of 1,000, then drained by one
 *    core Worker (concurrency 16, prefetch 32, 2 claims in flight: the bench's throughput
 *    settings). Prints wall tasks/s and redis-server CPU (INFO cpu) per task for create and for
 *    the drain (claim + complete), so 1e6 / (µs per task) is what one Redis core carries; and
 *    used_memory per pending and per finished task (payload `{ n }`, no admission keys).
 * 2. A 3-master Redis Cluster, `queues` queues placed on the masters in turn, the same number of
 *    tasks split over them, drained by one Worker per queue in one process through one Cluster
 *    client. Prints each master's CPU per task of its queues: the load splits by queue.
 * Each node's idle CPU rate (cron, cluster bus) is measured over 3 s first and subtracted. A
 * cluster master also feeds its replica and the cluster bus carries every wake-up PUBLISH to
 * every node. Wall figures depend on the machine's load (2 cores shared with the client here);
 * CPU per task much less.
 */
import Redis, { Cluster } from 'ioredis';
import { TaskEvents, TaskTypeRegistry, Worker } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { startRedisCluster, type ClusterNode } from '../../support/servers/redis-cluster';
import { startRedisServer } from '../../support/servers/redis-server';
import { CLUSTER_CLIENT_OPTIONS } from '../support/cluster-client';
import { placeQueue } from '../support/cluster-placement';
import { createAll, noopTask, waitTerminal } from '../support/fixtures';

const arg = (name: string, def: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;
const TASKS = Number(arg('tasks', '20000'));
const QUEUES = Number(arg('queues', '3'));

const info = (text: string, k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(text)![1]);
async function cpuUs(node: Redis): Promise<number> {
  const t = await node.info('cpu');
  return (info(t, 'used_cpu_user') + info(t, 'used_cpu_sys')) * 1e6;
}
async function memory(node: Redis): Promise<number> {
  return info(await node.info('memory'), 'used_memory');
}

/**
 * Creates `per` tasks in every store, drains them; returns wall ms of each phase and each node's
 * CPU in it, less what the node spends idle (cron, cluster pings) in the same time, measured
 * over 3 s before.
 */
async function run(stores: RedisTaskStore[], per: number, nodes: Redis[], onCreated?: () => Promise<void>) {
  const idle0 = await Promise.all(nodes.map(cpuUs));
  await new Promise((r) => setTimeout(r, 3_000));
  const idleRate = (await Promise.all(nodes.map(cpuUs))).map((c, i) => (c - idle0[i]) / 3_000);
  const cpu0 = await Promise.all(nodes.map(cpuUs));
  let t = Date.now();
  await Promise.all(stores.map((s) => createAll(s, Array.from({ length: per }, (_, i) => noopTask({ payload: { n: i } })), 1000)));
  const createMs = Date.now() - t;
  const cpu1 = await Promise.all(nodes.map(cpuUs));
  await onCreated?.();
  const registry = new TaskTypeRegistry();
  registry.register('noop', { idempotent: true }, { run: async () => null });
  const workers = stores.map(
    (store) => new Worker({ store, registry, events: new TaskEvents(), concurrency: 16, prefetch: 32, batchSize: 48, claimsInFlight: 2, leaseMs: 60_000 }),
  );
  const cpu2 = await Promise.all(nodes.map(cpuUs));
  t = Date.now();
  for (const w of workers) await w.start();
  await Promise.all(stores.map((s) => waitTerminal(s, per, 600_000)));
  const drainMs = Date.now() - t;
  const cpu3 = await Promise.all(nodes.map(cpuUs));
  await Promise.all(workers.map((w) => w.stop()));
  return {
    createMs,
    drainMs,
    createCpu: nodes.map((_, i) => cpu1[i] - cpu0[i] - idleRate[i] * createMs),
    drainCpu: nodes.map((_, i) => cpu3[i] - cpu2[i] - idleRate[i] * drainMs),
    idleUsPerSecond: idleRate.map((r) => r * 1000),
  };
}

async function single(): Promise<void> {
  const server = await startRedisServer();
  const conn = new Redis(server.url, { maxRetriesPerRequest: null });
  const store = new RedisTaskStore({ connection: conn, prefix: 'cap' });
  await store.init();
  try {
    const m0 = await memory(conn);
    let pendingBytes = 0;
    const r = await run([store], TASKS, [conn], async () => {
      pendingBytes = (await memory(conn)) - m0;
    });
    const finishedBytes = (await memory(conn)) - m0;
    console.log(`one redis-server, one queue, ${TASKS} tasks:`);
    console.log(`  create ${(TASKS / (r.createMs / 1000)).toFixed(0)} tasks/s wall, ${(r.createCpu[0] / TASKS).toFixed(1)} µs redis CPU per task`);
    console.log(`  drain  ${(TASKS / (r.drainMs / 1000)).toFixed(0)} tasks/s wall, ${(r.drainCpu[0] / TASKS).toFixed(1)} µs redis CPU per task (claim + complete)`);
    const perTask = (r.createCpu[0] + r.drainCpu[0]) / TASKS;
    console.log(`  one Redis core: ~${(1e6 / perTask).toFixed(0)} tasks/s created, claimed and finished (${perTask.toFixed(1)} µs per task)`);
    console.log(`  memory: ${(pendingBytes / TASKS).toFixed(0)} B per pending task, ${(finishedBytes / TASKS).toFixed(0)} B per finished task (kept until purge)`);
  } finally {
    await store.close();
    conn.disconnect();
    await server.stop();
  }
}

async function cluster(): Promise<void> {
  const c = await startRedisCluster();
  const client = new Cluster([...c.nodes], CLUSTER_CLIENT_OPTIONS);
  const masters = await c.masters();
  const stores: RedisTaskStore[] = [];
  const onMaster: ClusterNode[] = [];
  try {
    for (let i = 0; i < QUEUES; i++) {
      const p = await placeQueue(c, 'cap', `q${i}`, masters[i % masters.length]);
      onMaster.push(p.master);
      const s = new RedisTaskStore({ connection: client, prefix: p.prefix, queue: p.queue });
      await s.init();
      stores.push(s);
    }
    const per = Math.floor(TASKS / QUEUES);
    const nodes = masters.map((m) => c.admin(m));
    const r = await run(stores, per, nodes);
    const total = per * QUEUES;
    console.log(`Redis Cluster, ${masters.length} masters, ${QUEUES} queues (${per} tasks each, one Worker each, one process):`);
    console.log(`  create ${(total / (r.createMs / 1000)).toFixed(0)} tasks/s wall; drain ${(total / (r.drainMs / 1000)).toFixed(0)} tasks/s wall`);
    console.log(`  idle CPU per master (cluster cron and bus): ${r.idleUsPerSecond.map((x) => (x / 1000).toFixed(1)).join(', ')} ms/s (subtracted below)`);
    masters.forEach((m, i) => {
      const q = onMaster.filter((x) => x.port === m.port).length;
      const tasks = q * per;
      const us = (r.createCpu[i] + r.drainCpu[i]) / Math.max(1, tasks);
      console.log(`  master ${m.port}: ${q} queue(s), ${((r.createCpu[i] + r.drainCpu[i]) / 1000).toFixed(0)} ms CPU = ${us.toFixed(1)} µs per task of its queues`);
    });
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    client.disconnect();
    await c.stop();
  }
}

(async () => {
  await single();
  await cluster();
})().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
