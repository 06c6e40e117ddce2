/**
 * DESIGN §7 deadline boost through the worker: the claim that fires a boost reports it, and the
 * worker publishes it as a `boosted` event (boostedFrom = the priority before) before the task
 * runs at its new priority. On the stores with TaskStore.policies.boost, memory and Redis (the
 * contract suite covers the store side on each of them). The store runs on a ManualClock: the
 * boost fires when the test moves the clock, whatever the machine's speed.
 */
import Redis from 'ioredis';
import { ManualClock, PriorityQueue, TaskEvents, TaskStatus, TaskTypeRegistry, Worker, type TaskEvent, type TaskStore } from '../../libs/priority-queue/src/core';
import { RedisTaskStore } from 'nestjs-priority-queue/redis';
import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { ended } from './support/run-helpers';

const T0 = 1_700_000_000_000;

let server: RedisServerHandle | undefined;
let connection: Redis | undefined;
afterAll(async () => {
  connection?.disconnect();
  await server?.stop();
});

async function openStore(kind: 'memory' | 'redis', clock: ManualClock): Promise<TaskStore> {
  if (kind === 'memory') return new MemoryTaskStore({ clock });
  server ??= await startRedisServer();
  connection ??= new Redis(server.url, { maxRetriesPerRequest: 3 });
  const store = new RedisTaskStore({ connection, prefix: `boost${process.pid}`, clock });
  await store.init();
  return store;
}

it.each(['memory', 'redis'] as const)('%s: a boost fired by the worker\'s claim is a `boosted` event, then the task runs at the boost priority', async (kind) => {
  const clock = new ManualClock(T0);
  const store = await openStore(kind, clock);
  const registry = new TaskTypeRegistry();
  const ran: Array<{ id: string; priority: number }> = [];
  registry.register('job', { timeoutMs: 60_000, boost: { beforeDeadlineMs: 50_000, priority: 7 } }, { run: async ({ task }) => void ran.push({ id: task.id, priority: task.priority }) }, 'BoostHandler');
  const events = new TaskEvents();
  const seen: TaskEvent[] = [];
  events.on((e) => void seen.push(e));
  const queue = new PriorityQueue({ store, registry, events });
  // due at T0 + 20,000, its boost at T0 + 10,000: the boost fires while it waits
  const t = await queue.submit({ type: 'job', delayMs: 20_000 });
  expect(t).toMatchObject({ priority: 0, boostAt: T0 + 10_000, boostPriority: 7 });
  const boosted = new Promise<TaskEvent>((resolve) => events.on((e) => e.boostedFrom !== undefined && resolve(e)));
  const done = ended(events, t.id);
  const errors: unknown[] = [];
  const worker = new Worker({ store, registry, events, concurrency: 1, leaseMs: 5000, idlePollMs: 20, onError: (e) => errors.push(e) });
  await worker.start();
  try {
    clock.advance(10_000);
    const b = await boosted;
    expect(b).toMatchObject({ taskId: t.id, from: TaskStatus.PENDING_SUBMIT, to: TaskStatus.PENDING_SUBMIT, boostedFrom: 0, at: T0 + 10_000 });
    expect(b.task).toMatchObject({ priority: 7, version: 2 });
    clock.advance(10_000);
    expect((await done).to).toBe(TaskStatus.SUCCEEDED);
  } finally {
    await worker.stop();
    await store.close();
  }
  expect(errors).toEqual([]);
  expect(ran).toEqual([{ id: t.id, priority: 7 }]);
  expect(seen.filter((e) => e.boostedFrom !== undefined)).toHaveLength(1);
  expect(seen.indexOf(await boosted)).toBeLessThan(seen.findIndex((e) => e.to === TaskStatus.SUBMITTING));
});
