import {
  ManualClock,
  PermanentError,
  PriorityQueue,
  resolveRemoval,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  ValidationError,
  waitForTask,
  Worker,
  type TaskEvent,
} from '../../libs/priority-queue/src/core';
import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';

/**
 * removeOnComplete / removeOnFail through the worker (core/removal.ts): a type's setting wins over
 * the queue's, events and waitFor still see the terminal task, bad options are typed errors.
 * (The stores' side of the rules is the contract suite's cases/removal.cases.ts.)
 */
function setup(queueRemoval: Parameters<TaskTypeRegistry['setQueueRemoval']>[0]) {
  const clock = new ManualClock();
  const store = new MemoryTaskStore({ clock });
  const registry = new TaskTypeRegistry();
  registry.setQueueRemoval(queueRemoval);
  const ok = { run: ({ payload }: { payload: unknown }) => ({ echo: payload }) };
  const failing = { run: () => { throw new PermanentError('no'); } };
  registry.register('plain', {}, ok, 'Plain');
  registry.register('keep', { removeOnComplete: false, removeOnFail: 2 }, failing, 'Keep');
  registry.register('keepOk', { removeOnComplete: false }, ok, 'KeepOk');
  registry.register('counted', { removeOnComplete: { count: 3 } }, ok, 'Counted');
  const events = new TaskEvents();
  const seen: TaskEvent[] = [];
  events.on((e) => seen.push(e));
  const queue = new PriorityQueue({ store, registry, events });
  const worker = new Worker({ store, registry, events, concurrency: 4, random: () => 0.5 });
  const drain = async () => {
    while ((await worker.tick()) > 0) await worker.whenIdle();
    await worker.whenIdle();
  };
  return { clock, store, queue, worker, drain, seen };
}

describe('removeOnComplete / removeOnFail through the worker', () => {
  it('queue true deletes succeeded tasks at finish; a type with false keeps them; events and waitFor see the terminal task', async () => {
    const { queue, drain, seen, store } = setup({ removeOnComplete: true });
    const a = await queue.submit({ type: 'plain', payload: { n: 1 } });
    const b = await queue.submit({ type: 'keepOk', payload: { n: 2 } });
    const waiting = waitForTask({ get: (id) => queue.get(id), events: queue.events }, a.id, { timeoutMs: 60_000 });
    await drain();
    const done = await waiting;
    expect(done).toMatchObject({ id: a.id, status: TaskStatus.SUCCEEDED, result: { echo: { n: 1 } } });
    expect(await queue.get(a.id)).toBeNull();
    expect((await queue.get(b.id))?.status).toBe(TaskStatus.SUCCEEDED);
    const end = seen.find((e) => e.taskId === a.id && e.to === TaskStatus.SUCCEEDED);
    expect(end?.task.result).toEqual({ echo: { n: 1 } });
    expect((await store.stats()).byStatus[TaskStatus.SUCCEEDED]).toBe(1);
    await expect(waitForTask({ get: (id) => queue.get(id), events: queue.events }, a.id)).rejects.toThrow(/does not exist/);
  });

  it('removeOnFail of a type (count 2) over the queue (true); removeOnComplete count of another type', async () => {
    const { queue, drain, clock } = setup({ removeOnComplete: true, removeOnFail: true });
    const failed: string[] = [];
    for (let i = 0; i < 5; i++) {
      failed.push((await queue.submit({ type: 'keep', payload: { i } })).id);
      await drain();
      clock.advance(5);
    }
    const counted: string[] = [];
    for (let i = 0; i < 7; i++) {
      counted.push((await queue.submit({ type: 'counted', payload: { i } })).id);
      await drain();
      clock.advance(5);
    }
    const still = async (xs: string[]) => (await Promise.all(xs.map((id) => queue.get(id)))).filter((t) => t !== null).map((t) => t!.id);
    expect(await still(failed)).toEqual(failed.slice(-2));
    expect(await still(counted)).toEqual(counted.slice(-3));
  });

  it('bad options are ValidationErrors that say what is wrong, for the queue and for a type', () => {
    const registry = new TaskTypeRegistry();
    for (const bad of [-1, 1.5, 'yes', null, [], {}, { age: -1 }, { count: 2, keep: 1 }, { age: 1e12 }]) {
      expect(() => registry.setQueueRemoval({ removeOnComplete: bad as never })).toThrow(ValidationError);
      expect(() => registry.register('t', { removeOnFail: bad as never })).toThrow(/removeOnFail must be true, false, an integer count/);
    }
    expect(() => registry.setQueueRemoval({ removeOnComplete: 'yes' as never })).toThrow(/Invalid option removeOnComplete of the queue = "yes"/);
    expect(resolveRemoval({ removeOnComplete: { age: 60 } }, { removeOnComplete: true, removeOnFail: 10 })).toEqual({
      onComplete: { now: false, count: null, ageMs: 60_000 },
      onFail: { now: false, count: 10, ageMs: null },
    });
    expect(resolveRemoval({ removeOnComplete: 0, removeOnFail: false }, { removeOnFail: true })).toEqual({ onComplete: { now: true }, onFail: null });
  });
});
