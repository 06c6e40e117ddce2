/**
 * issue 12 §5: a draining worker claims full batches whatever its handlers' depth in
 * microtasks. A handler that returns within the turn (an async function awaiting a resolved
 * promise, as the bench's does) frees its slot a few microtasks after the claim that started it;
 * the round used to read its free slots after its own awaits, in the middle of that cascade, and
 * claimed the slots freed so far (32 of 48 at concurrency 16 + prefetch 32): 50% more claims,
 * the bench's PostgreSQL drain 0.81-0.90 of 3f2ecfb. Now a round claims again at once only for
 * the slots free right after its dispatch; the slots that free later claim through their
 * wake-up, in the next turn, all together. Counted, not timed: the `limit` of every claim call.
 */
import { TaskEvents, TaskStatus, TaskTypeRegistry, Worker, type TaskStore } from '../../libs/priority-queue/src/core';
import { ManualTimers } from './support/counting-store';
import { RealStores, type StoreKind } from './support/real-stores';
import { plainTask } from '../support/new-task';

jest.setTimeout(180_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

const CONCURRENCY = 16;
const PREFETCH = 32;
const BATCH = CONCURRENCY + PREFETCH;
/** Tasks per drain: forty full batches. */
const N = 40 * BATCH;

/** The store behind a Proxy that records the limit of every submission claim (alone or with completes). */
function recordingLimits(store: TaskStore): { store: TaskStore; limits: number[] } {
  const limits: number[] = [];
  const proxy = new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const f = (v as (...a: unknown[]) => unknown).bind(target);
      if (prop === 'claimSubmissions') return (...a: unknown[]) => (limits.push((a[0] as { limit: number }).limit), f(...a));
      if (prop === 'completeAndClaim') return (...a: unknown[]) => (limits.push((a[1] as { limit: number }).limit), f(...a));
      return f;
    },
  });
  return { store: proxy, limits };
}

/** A handler that returns after `depth` awaits of settled promises (0: a plain function). */
function handlerOf(depth: number): () => unknown {
  if (depth === 0) return () => null;
  return async () => {
    for (let k = 0; k < depth; k++) await Promise.resolve();
    return null;
  };
}

describe.each(['memory', 'redis', 'postgres'] as const)('A draining worker on %s claims full batches', (kind: StoreKind) => {
  it.each([0, 1, 2, 5])('handlers %i microtask(s) deep: every claim asks for concurrency + prefetch', async (depth) => {
    const opened = await stores.open(kind);
    const { store, limits } = recordingLimits(opened.store);
    const registry = new TaskTypeRegistry();
    registry.register('job', { idempotent: true }, { run: handlerOf(depth) }, 'TestHandler');
    const run = `${kind}-${depth}-${Math.random().toString(36).slice(2)}`;
    for (let i = 0; i < N; i += 500) {
      await opened.store.create(
        Array.from({ length: Math.min(500, N - i) }, (_, k) => plainTask({ id: `${run}-${i + k}`, payload: { i: i + k }, priority: (i + k) % 10, maxAttempts: 3 })),
      );
    }
    const events = new TaskEvents();
    let done = 0;
    let allDone!: () => void;
    const finished = new Promise<void>((r) => (allDone = r));
    events.on((e) => {
      if (e.to === TaskStatus.SUCCEEDED && ++done === N) allDone();
    });
    const errors: unknown[] = [];
    // timers that never fire: only the drain's own wake-ups claim (no poll timer's round)
    const worker = new Worker({ store, registry, events, concurrency: CONCURRENCY, prefetch: PREFETCH, timers: new ManualTimers(), onError: (e) => errors.push(e) });
    await worker.start();
    await finished;
    await worker.stop();
    expect(errors).toEqual([]);
    expect((await opened.store.stats()).byStatus[TaskStatus.SUCCEEDED]).toBe(N);
    // every claim asked for a whole batch; the old round asked for 32 of 48 with async handlers
    expect(limits.filter((l) => l !== BATCH)).toEqual([]);
    // the forty full ones, and the one (or two) that found the queue empty
    expect(limits.length).toBeLessThanOrEqual(N / BATCH + 2);
  });
});
