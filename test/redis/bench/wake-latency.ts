/**
 * Local measure (not a test): how soon an idle worker starts new work on the Redis store.
 * - immediate: a producer process-side create() -> the handler starts (wall clock, same machine);
 *   the idle worker is woken through the store's pub/sub, its poll fallback is 250 ms.
 * - delayed: a task with delayMs = 100 (below the 250 ms poll fallback) -> claim time (store clock) minus runAt.
 *   node -r ./test/support/register.js test/redis/bench/wake-latency.ts
 */
import Redis from 'ioredis';
import { TaskEvents, TaskStatus, TaskTypeRegistry, Worker } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { startRedisServer } from '../../support/servers/redis-server';
import { noopTask } from '../support/fixtures';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

(async () => {
  const srv = await startRedisServer();
  const workerConn = new Redis(srv.url);
  const producerConn = new Redis(srv.url);
  const workerStore = new RedisTaskStore({ connection: workerConn, prefix: 'lat' });
  const producer = new RedisTaskStore({ connection: producerConn, prefix: 'lat' });
  const registry = new TaskTypeRegistry();
  const started = new Map<string, number>();
  registry.register('noop', {}, { run: ({ task }) => void started.set(task.id, Date.now()) });
  const events = new TaskEvents();
  const claimedAt = new Map<string, number>();
  const LEASE = 30_000;
  events.on((e) => {
    if (e.to === TaskStatus.SUBMITTING) claimedAt.set(e.taskId, e.task.leaseUntil! - LEASE);
  });
  const worker = new Worker({ store: workerStore, registry, events, leaseMs: LEASE, idlePollMs: 250 });
  try {
    await producer.init();
    await worker.start();
    const immediate: number[] = [];
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30)); // idle in between
      const t0 = Date.now();
      const [{ task }] = await producer.create([noopTask({})]);
      while (!started.has(task.id)) await new Promise((r) => setImmediate(r));
      immediate.push(started.get(task.id)! - t0);
    }
    const delayed: number[] = [];
    for (let i = 0; i < 30; i++) {
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
      const [{ task }] = await producer.create([noopTask({ delayMs: 100 })]);
      while (!claimedAt.has(task.id)) await new Promise((r) => setTimeout(r, 5));
      delayed.push(claimedAt.get(task.id)! - task.runAt);
    }
    console.log(`create -> handler start (idle worker): p50 ${pct(immediate, 0.5)} ms, p95 ${pct(immediate, 0.95)} ms, max ${Math.max(...immediate)} ms`);
    console.log(`delayed task: claim - runAt (store clock): p50 ${pct(delayed, 0.5)} ms, p95 ${pct(delayed, 0.95)} ms, max ${Math.max(...delayed)} ms`);
  } finally {
    await worker.stop();
    await workerStore.close();
    await producer.close();
    workerConn.disconnect();
    producerConn.disconnect();
    await srv.stop();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
