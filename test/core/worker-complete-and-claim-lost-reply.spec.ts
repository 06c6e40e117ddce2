/**
 * TaskStore.completeAndClaim with a real fault: the combined call runs on the server but its reply
 * is lost (a TCP proxy drops the client's connection right after forwarding it;
 * test/support/tcp-proxy.ts). Redis: ioredis re-sends the script on its new connection; its
 * complete is refused (the first run wrote it) and its claim claims a second batch. PostgreSQL:
 * the driver reports the dropped connection; the worker writes the complete again (refused the
 * same way) and claims in a later round. Either way, as with a plain claim whose reply is lost,
 * the tasks the lost reply claimed were never handed to a handler: they stay leased to the
 * worker until the lease expires and recovery puts them back (one failed attempt counted), and
 * they run then. No task runs twice, every task ends SUCCEEDED.
 */
import { TaskEvents, TaskStatus, TaskTypeRegistry, Worker, type NewTask } from '../../libs/priority-queue/src/core';
import type { ChunkMatch } from '../support/tcp-proxy';
import { luaCall, pgPrepared } from './support/lost-reply-matchers';
import { RealStores, type StoreKind } from './support/real-stores';
import { plainTask } from '../support/new-task';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

const COMBINED: Partial<Record<StoreKind, () => ChunkMatch[]>> = {
  redis: () => luaCall('complete_and_claim'),
  postgres: () => pgPrepared('complete_and_claim('),
};

const N = 6;

describe.each(['redis', 'postgres'] as const)('Worker, lost completeAndClaim reply on %s', (kind) => {
  it('the claimed tasks of the lost reply go to recovery at lease expiry and run then; no task runs twice; all SUCCEEDED', async () => {
    // PostgreSQL on a pool of one connection: the worker's claim would wait for its completes, so
    // they ride on it (core/worker.ts completesRideOnClaims; on a larger pool they go apart)
    const { store, proxy } = await stores.open(kind, { proxy: true, poolSize: 1 });
    expect(store.parallelCalls ?? false).toBe(false);
    const dropped = proxy!.dropAfter(COMBINED[kind]!());
    const registry = new TaskTypeRegistry();
    const runs = new Map<string, number>();
    registry.register('job', { idempotent: true }, { run: ({ task }) => runs.set(task.id, (runs.get(task.id) ?? 0) + 1).size }, 'TestHandler');
    const events = new TaskEvents();
    const tasks: NewTask[] = Array.from({ length: N }, (_, i) => plainTask({ id: `lost-cc-${kind}-${i}-${Math.random().toString(36).slice(2)}`, payload: { i }, priority: N - i }));
    await store.create(tasks);
    const worker = new Worker({ store, registry, events, concurrency: 1, leaseMs: 1500, recoverEveryMs: 200, idlePollMs: 50, onError: () => undefined });
    await worker.start();
    await dropped; // the fault did happen
    const ids = tasks.map((t) => t.id);
    for (;;) {
      const all = await Promise.all(ids.map((id) => store.get(id)));
      if (all.every((t) => t?.status === TaskStatus.SUCCEEDED)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await worker.stop();
    const final = await Promise.all(ids.map(async (id) => (await store.get(id))!));
    expect(ids.map((id) => runs.get(id) ?? 0)).toEqual(ids.map(() => 1)); // each handler ran once
    // the first combined call claimed the second task; its reply was lost, so recovery gave it back once
    expect(final.map((t) => t.attempts)).toEqual([0, 1, 0, 0, 0, 0]);
    expect(final.map((t) => t.status)).toEqual(ids.map(() => TaskStatus.SUCCEEDED));
  });
});
