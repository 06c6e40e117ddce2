/**
 * DESIGN §4: timeoutMs is an overall deadline, also for a running handler. At deadlineAt (store
 * clock) the handler's AbortSignal fires (reason DeadlinePassedError), a late result is
 * discarded, the task ends TIMED_OUT; a provider task stops polling and its handler's cancel
 * hook is called once with the external id, by whoever finalises it (the worker holding its
 * lease, or the recovery sweep when the deadline passes between polls).
 * Handlers here are slow on purpose (they sleep far past the deadline unless aborted); nothing
 * asserts on time.
 */
import {
  DeadlinePassedError,
  PriorityQueue,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type TaskEvent,
  type TaskHandler,
  type TaskStore,
  type TaskTypeOptions,
  type WorkerOptions,
} from '../../libs/priority-queue/src/core';
import { RealStores, type StoreKind } from './support/real-stores';
import { abortOf, ended, sleep } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

/**
 * Deadlines below are 1 s or more after the submit, so that a loaded machine still claims
 * before them; SLOW_MS is far past them: a handler still running then was not aborted.
 */
const SLOW_MS = 8000;

function setup(store: TaskStore, handler: TaskHandler, options: TaskTypeOptions, workers = 1, workerOpts: Partial<WorkerOptions> = {}) {
  const registry = new TaskTypeRegistry();
  registry.register('job', { pollIntervalMs: 20, ...options }, handler, 'TestHandler');
  const events = new TaskEvents();
  const errors: unknown[] = [];
  const queue = new PriorityQueue({ store, registry, events });
  const all = Array.from(
    { length: workers },
    () => new Worker({ store, registry, events, concurrency: 2, leaseMs: 5000, recoverEveryMs: 100, idlePollMs: 50, onError: (e) => errors.push(e), ...workerOpts }),
  );
  const start = () => Promise.all(all.map((w) => w.start()));
  const stop = async () => {
    await Promise.all(all.map((w) => w.whenIdle()));
    await Promise.all(all.map((w) => w.stop()));
  };
  /** One task submitted, the workers started, its end awaited, the workers stopped. */
  const runOne = async () => {
    const t = await queue.submit({ type: 'job' });
    const end$ = ended(events, t.id);
    await start();
    const end = await end$;
    await stop();
    return { t, end };
  };
  return { queue, workers: all, errors, ended: (id: string) => ended(events, id), start, stop, runOne };
}

/** One task with a 1 s deadline whose handler sleeps far past it unless aborted, run to its end. */
async function runPastDeadline(store: TaskStore) {
  const seen = { runs: 0, reason: undefined as unknown };
  const h = setup(
    store,
    {
      run: async ({ signal }) => {
        seen.runs++;
        await Promise.race([abortOf(signal), sleep(SLOW_MS)]);
        seen.reason = signal.reason;
        return 'late result'; // returned after the abort: must not be written
      },
    },
    { timeoutMs: 1000 },
  );
  const { t, end } = await h.runOne();
  return { seen, h, t, end };
}

describe.each(['memory', 'redis', 'postgres', 'sqlite'] as StoreKind[])('Worker deadlines on %s', (kind) => {
  it('a one-shot handler still running at its deadline is aborted and the task ends TIMED_OUT (a failed attempt); its late result is discarded', async () => {
    const { store } = await stores.open(kind);
    const { seen, h, t, end } = await runPastDeadline(store);
    expect({ to: end.to, from: end.from, runs: seen.runs }).toEqual({ to: TaskStatus.TIMED_OUT, from: TaskStatus.SUBMITTING, runs: 1 });
    expect(seen.reason).toBeInstanceOf(DeadlinePassedError);
    expect(await store.get(t.id)).toMatchObject({ status: TaskStatus.TIMED_OUT, result: null, attempts: 1, leaseId: null, error: 'deadline passed' });
    expect(h.errors).toEqual([]);
  });

  it('a provider task whose deadline passes while it waits for its next poll: the recovery sweep times it out and its cancel hook is called once (two workers sweeping)', async () => {
    const { store } = await stores.open(kind);
    const cancelled: string[] = [];
    let polls = 0;
    const h = setup(
      store,
      {
        submit: () => 'ext-between',
        poll: () => {
          polls++;
          return { done: false };
        },
        cancel: ({ externalId }) => {
          cancelled.push(externalId);
        },
      },
      // its first poll falls due long after the deadline: only the sweep can finalise it
      { timeoutMs: 1000, pollIntervalMs: 60_000 },
      2,
    );
    const { t, end } = await h.runOne();
    expect({ from: end.from, to: end.to, polls }).toEqual({ from: TaskStatus.SUBMITTED, to: TaskStatus.TIMED_OUT, polls: 0 });
    expect(cancelled).toEqual(['ext-between']);
    expect(await store.get(t.id)).toMatchObject({ status: TaskStatus.TIMED_OUT, externalId: 'ext-between', nextPollAt: null, leaseId: null });
    expect(h.errors).toEqual([]);
  });
});

describe.each(['memory', 'redis'] as StoreKind[])('Worker deadlines on %s, provider tasks and prefetch', (kind) => {
  it('a poll still running at the deadline is aborted: TIMED_OUT, no more polls, the cancel hook gets the external id once', async () => {
    const { store } = await stores.open(kind);
    const cancelled: string[] = [];
    let polls = 0;
    let reason: unknown;
    const h = setup(
      store,
      {
        submit: () => 'ext-poll',
        poll: async ({ signal }) => {
          polls++;
          await Promise.race([abortOf(signal), sleep(SLOW_MS)]);
          reason = signal.reason;
          return { done: true, result: 'late' };
        },
        cancel: ({ externalId }) => {
          cancelled.push(externalId);
        },
      },
      { timeoutMs: 1000 },
    );
    const { t, end } = await h.runOne();
    expect({ to: end.to, polls, cancelled }).toEqual({ to: TaskStatus.TIMED_OUT, polls: 1, cancelled: ['ext-poll'] });
    expect(reason).toBeInstanceOf(DeadlinePassedError);
    expect(await store.get(t.id)).toMatchObject({ status: TaskStatus.TIMED_OUT, externalId: 'ext-poll', result: null, nextPollAt: null, attempts: 0 });
  });

  it('a submit() that returns its external id after the deadline: TIMED_OUT at the deadline, then the cancel hook gets that id', async () => {
    const { store } = await stores.open(kind);
    const cancelled: string[] = [];
    let ended!: Promise<TaskEvent>;
    const h = setup(
      store,
      {
        submit: async () => {
          await Promise.race([ended, sleep(SLOW_MS)]); // ignores its signal: the provider answers after the task ended
          return 'ext-late';
        },
        poll: () => ({ done: true }),
        cancel: ({ externalId }) => {
          cancelled.push(externalId);
        },
      },
      { timeoutMs: 1000 },
    );
    const t = await h.queue.submit({ type: 'job' });
    ended = h.ended(t.id);
    await h.start();
    const end = await ended;
    await h.stop();
    expect(end.to).toBe(TaskStatus.TIMED_OUT);
    expect(cancelled).toEqual(['ext-late']);
    expect(await store.get(t.id)).toMatchObject({ status: TaskStatus.TIMED_OUT, externalId: null, attempts: 1 });
  });

  it('a prefetched task whose deadline passes while it waits for a slot ends TIMED_OUT without its handler running', async () => {
    const { store } = await stores.open(kind);
    const ran: string[] = [];
    const h = setup(
      store,
      {
        run: async ({ payload }) => {
          const p = payload as { name: string };
          ran.push(p.name);
          if (p.name === 'long') await sleep(2500);
          return p.name;
        },
      },
      {},
      1,
      { concurrency: 1, prefetch: 1 },
    );
    const [long, short] = await h.queue.submitMany([
      { type: 'job', priority: 1, payload: { name: 'long' } },
      { type: 'job', payload: { name: 'short' }, timeoutMs: 1000 },
    ]);
    const endedShort = h.ended(short.id);
    const endedLong = h.ended(long.id);
    await h.start();
    const [a, b] = await Promise.all([endedLong, endedShort]);
    await h.stop();
    expect([a.to, b.to]).toEqual([TaskStatus.SUCCEEDED, TaskStatus.TIMED_OUT]);
    expect(ran).toEqual(['long']);
    expect(await store.get(short.id)).toMatchObject({ status: TaskStatus.TIMED_OUT, attempts: 0 });
  });
});

describe('Worker deadlines when the store clock cannot be read yet', () => {
  it('the wall clock stands in for it: a handler still running at its deadline is aborted (DeadlinePassedError)', async () => {
    const { store: inner } = await stores.open('memory');
    // every read of the store clock fails (the worker's clock sync); everything else works
    const store = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'now') return () => Promise.reject(new Error('clock unavailable'));
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const { seen, end } = await runPastDeadline(store);
    expect(end.to).toBe(TaskStatus.TIMED_OUT);
    expect(seen.reason).toBeInstanceOf(DeadlinePassedError);
  });
});
