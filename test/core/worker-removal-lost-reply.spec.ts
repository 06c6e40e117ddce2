/**
 * removeOnComplete: true with a real fault: the complete that deletes the task runs on the server
 * but its reply is lost (a TCP proxy drops the client's connection right after forwarding it;
 * test/support/tcp-proxy.ts). Redis: ioredis re-sends the script (complete, or complete_and_claim
 * when it rode on a claim), which finds no task;
 * PostgreSQL: the driver reports the dropped connection, the worker writes again and finds no
 * task. Either way that complete did its work: the worker reports no error, the task's terminal
 * event is still emitted (events and waitFor see the end), the handler ran once.
 */
import { PriorityQueue, TaskEvents, TaskStatus, TaskTypeRegistry, Worker } from '../../libs/priority-queue/src/core';
import type { ChunkMatch } from '../support/tcp-proxy';
import { luaCall, pgPrepared } from './support/lost-reply-matchers';
import { RealStores, type StoreKind } from './support/real-stores';
import { ended } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

/** The chunks of the deleting complete, per store, as the client sends them. */
const COMPLETE: Partial<Record<StoreKind, () => ChunkMatch[]>> = {
  // alone, or riding on a claim (completeAndClaim: a draining worker's usual way)
  redis: () => {
    const [alone] = luaCall('complete');
    const [withClaim] = luaCall('complete_and_claim');
    return [(c) => alone(c) || withClaim(c)];
  },
  // sql/complete-removing.ts RemovingCompleter on PostgreSQL: one statement
  postgres: () => pgPrepared('WITH b AS (SELECT * FROM unnest'),
};

describe.each(['redis', 'postgres'] as const)('Worker, removeOnComplete: true, lost complete reply on %s', (kind) => {
  it('the task is deleted once, its SUCCEEDED event is emitted, the worker reports no error, the handler ran once', async () => {
    const { store, proxy } = await stores.open(kind, { proxy: true });
    const dropped = proxy!.dropAfter(COMPLETE[kind]!());
    const registry = new TaskTypeRegistry();
    registry.setQueueRemoval({ removeOnComplete: true });
    let runs = 0;
    registry.register('job', { idempotent: true }, { run: () => ({ runs: ++runs }) }, 'TestHandler');
    const events = new TaskEvents();
    const errors: unknown[] = [];
    let failed: (e: unknown) => void = () => undefined;
    const firstError = new Promise<never>((_, reject) => (failed = reject));
    const queue = new PriorityQueue({ store, registry, events });
    const worker = new Worker({ store, registry, events, concurrency: 1, leaseMs: 5000, recoverEveryMs: 200, idlePollMs: 50, onError: (e) => { errors.push(e); failed(e); } });
    const t = await queue.submit({ type: 'job' });
    const end = ended(events, t.id);
    await worker.start();
    const e = await Promise.race([end, firstError]); // an error reported instead of the end fails at once
    await dropped; // the fault did happen
    await worker.stop();
    expect({ to: e.to, result: e.task.result, runs }).toEqual({ to: TaskStatus.SUCCEEDED, result: { runs: 1 }, runs: 1 });
    expect(await store.get(t.id)).toBeNull();
    expect(errors).toEqual([]);
  });
});
