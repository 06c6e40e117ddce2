import {
  InvalidStateError,
  ManualClock,
  NotSubmittedError,
  PermanentError,
  PriorityQueue,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  ValidationError,
  Worker,
  type TaskEvent,
  type TaskHandler,
  type TaskTypeOptions,
} from '../../libs/priority-queue/src/core';
import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';

/** A worker driven by hand (tick + whenIdle) over the memory store and a manual clock. */
function setup(handler: TaskHandler, options: TaskTypeOptions = {}, workerOpts: Partial<ConstructorParameters<typeof Worker>[0]> = {}) {
  const clock = new ManualClock();
  const store = new MemoryTaskStore({ clock });
  const registry = new TaskTypeRegistry();
  registry.register('job', { backoff: { baseMs: 1000, maxMs: 8000 }, pollIntervalMs: 500, ...options }, handler, 'TestHandler');
  const events = new TaskEvents();
  const seen: TaskEvent[] = [];
  events.on((e) => seen.push(e));
  const queue = new PriorityQueue({ store, registry, events });
  const worker = new Worker({ store, registry, events, concurrency: 4, random: () => 0.5, ...workerOpts });
  const step = async () => {
    const n = await worker.tick();
    await worker.whenIdle();
    return n;
  };
  return { clock, store, queue, worker, step, seen };
}

/**
 * Five rounds of 40 ms real time while the store clock moves 25 ms each (store time moves slower
 * than real time: a late timer cannot fail a test); with leaseMs 90 and renewals every 30 ms of
 * real time, no lease may expire.
 */
async function expectLeasesKept(clock: ManualClock, store: MemoryTaskStore): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 40));
    clock.advance(25);
    expect(await store.recoverExpired(10)).toEqual([]);
  }
}

describe('Worker', () => {
  it('retries an idempotent submit error with exponential back-off, then fails at maxAttempts', async () => {
    let calls = 0;
    const { clock, queue, step } = setup({ run: () => { calls++; throw new Error(`boom ${calls}`); } }, { maxAttempts: 3 });
    const t = await queue.submit({ type: 'job' });
    await step();
    let cur = (await queue.get(t.id))!;
    expect(cur.status).toBe(TaskStatus.PENDING_SUBMIT);
    expect(cur.attempts).toBe(1);
    expect(cur.runAt - clock.now()).toBe(750); // base 1000, equal jitter at 0.5
    expect(await step()).toBe(0); // not due yet
    clock.advance(750);
    await step();
    cur = (await queue.get(t.id))!;
    expect(cur.attempts).toBe(2);
    expect(cur.runAt - clock.now()).toBe(1500); // base * 2 = 2000, jittered to 1500
    clock.advance(1500);
    await step();
    cur = (await queue.get(t.id))!;
    expect(cur.status).toBe(TaskStatus.FAILED);
    expect(cur.error).toBe('boom 3');
    expect(calls).toBe(3);
    expect(cur.attempts).toBe(3); // every failed attempt counts, the last one too
  });

  it('a non-idempotent submit error becomes SUBMIT_UNKNOWN, unless the provider never saw it', async () => {
    let mode: 'unknown' | 'never' = 'never';
    const { clock, queue, step } = setup(
      { run: () => { throw mode === 'never' ? new NotSubmittedError('429', 200) : new Error('socket hang up'); } },
      { idempotent: false },
    );
    const t = await queue.submit({ type: 'job' });
    await step();
    let cur = (await queue.get(t.id))!;
    expect(cur.status).toBe(TaskStatus.PENDING_SUBMIT);
    expect(cur.runAt - clock.now()).toBe(200); // retryAfterMs wins over the back-off
    mode = 'unknown';
    clock.advance(200);
    await step();
    cur = (await queue.get(t.id))!;
    expect(cur.status).toBe(TaskStatus.SUBMIT_UNKNOWN);
    expect(cur.error).toBe('socket hang up');
    expect(cur.attempts).toBe(2); // the NotSubmittedError retry and the unknown outcome
  });

  it('a PermanentError fails at once', async () => {
    const { queue, step } = setup({ run: () => { throw new PermanentError('bad document'); } });
    const t = await queue.submit({ type: 'job' });
    await step();
    expect((await queue.get(t.id))!).toMatchObject({ status: TaskStatus.FAILED, error: 'bad document', attempts: 1 }); // a failed attempt too
  });

  it('polls a provider task with the handler delay, backs off on poll errors, and finishes', async () => {
    const answers: Array<() => unknown> = [
      () => ({ done: false, nextPollMs: 100 }),
      () => { throw new Error('provider 503'); },
      () => { throw new Error('provider 503'); },
      () => ({ done: true, result: { pages: 3 } }),
    ];
    const { clock, queue, step, seen } = setup({ submit: () => 'ext-1', poll: () => answers.shift()!() as never });
    const t = await queue.submit({ type: 'job' });
    await step();
    let cur = (await queue.get(t.id))!;
    expect(cur).toMatchObject({ status: TaskStatus.SUBMITTED, externalId: 'ext-1', nextPollAt: clock.now() + 500 });
    clock.advance(500);
    await step();
    cur = (await queue.get(t.id))!;
    expect(cur).toMatchObject({ status: TaskStatus.RUNNING, nextPollAt: clock.now() + 100 });
    clock.advance(100);
    await step();
    cur = (await queue.get(t.id))!;
    expect(cur.pollErrors).toBe(1);
    expect(cur.nextPollAt! - clock.now()).toBe(375); // 500 * 2^0 jittered
    clock.advance(375);
    await step();
    cur = (await queue.get(t.id))!;
    expect(cur.pollErrors).toBe(2);
    expect(cur.nextPollAt! - clock.now()).toBe(750); // doubled
    clock.advance(750);
    await step();
    cur = (await queue.get(t.id))!;
    expect(cur).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { pages: 3 } });
    expect(seen.filter((e) => e.taskId === t.id).map((e) => e.to)).toEqual([
      TaskStatus.PENDING_SUBMIT,
      TaskStatus.SUBMITTING,
      TaskStatus.SUBMITTED,
      TaskStatus.RUNNING,
      TaskStatus.SUCCEEDED,
    ]);
  });

  it('cancels a submitted task through the handler without another poll', async () => {
    const cancelled: string[] = [];
    let polls = 0;
    const { queue, step } = setup({
      submit: () => 'ext-9',
      poll: () => { polls++; return { done: false }; },
      cancel: ({ externalId }) => { cancelled.push(externalId); },
    });
    const t = await queue.submit({ type: 'job' });
    await step();
    await queue.cancel(t.id);
    await step(); // cancel-requested tasks are claimed at once, not at nextPollAt
    expect((await queue.get(t.id))!.status).toBe(TaskStatus.CANCELED);
    expect(cancelled).toEqual(['ext-9']);
    expect(polls).toBe(0);
  });

  it('renews the lease while a slow handler runs, so recovery does not take the task away', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { clock, queue, worker, store } = setup({ run: () => gate.then(() => 'ok') }, {}, { leaseMs: 90 });
    const t = await queue.submit({ type: 'job' });
    await worker.tick();
    await expectLeasesKept(clock, store);
    release();
    await worker.whenIdle();
    expect((await queue.get(t.id))!.status).toBe(TaskStatus.SUCCEEDED);
  });

  it('aborts the handler and drops its write when the lease was lost', async () => {
    let signal!: AbortSignal;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    // the first run's result comes after its lease was lost; the worker may claim the recovered task again at once (a
    // round of the finished handler), and that run's result is its own
    const { clock, queue, worker, store } = setup({ run: (ctx) => (++runs === 1 ? ((signal = ctx.signal), gate.then(() => 'late')) : 'again') }, {}, { leaseMs: 60 });
    const t = await queue.submit({ type: 'job' });
    await worker.tick();
    clock.advance(61); // the lease expires before any renewal (renewals run every 20 ms of real time)
    const recovered = await store.recoverExpired(10);
    expect(recovered.map((r) => r.to)).toEqual([TaskStatus.PENDING_SUBMIT]);
    await new Promise((r) => setTimeout(r, 30)); // the next renewal is refused
    expect(signal.aborted).toBe(true);
    release();
    await worker.whenIdle();
    const cur = (await queue.get(t.id))!;
    // the stale result was not written: the task is back in the queue, or ended by the run that claimed it again
    expect({ status: cur.status, result: cur.result }).toEqual(
      runs === 1 ? { status: TaskStatus.PENDING_SUBMIT, result: null } : { status: TaskStatus.SUCCEEDED, result: 'again' },
    );
    expect(cur.attempts).toBe(1);
  });

  it('stop() waits for running handlers within the grace period and hands back the rest', async () => {
    let releaseFast!: () => void;
    const fast = new Promise<void>((r) => (releaseFast = r));
    const { queue, worker } = setup(
      { run: ({ payload }) => ((payload as { slow: boolean }).slow ? new Promise(() => undefined) : fast.then(() => 'done')) },
      {},
      { shutdownGraceMs: 50 },
    );
    const a = await queue.submit({ type: 'job', payload: { slow: false } });
    const b = await queue.submit({ type: 'job', payload: { slow: true } });
    await worker.tick();
    expect(worker.running).toBe(2);
    const stopped = worker.stop();
    releaseFast();
    await stopped;
    expect((await queue.get(a.id))!.status).toBe(TaskStatus.SUCCEEDED);
    // handed back for another worker; it ran, so the hand-back is a retry that counts an attempt
    expect((await queue.get(b.id))!).toMatchObject({ status: TaskStatus.PENDING_SUBMIT, attempts: 1, error: 'handed back: worker shut down' });
    expect(await worker.tick()).toBe(0); // a stopped worker claims nothing
  });

  it('runs at most `concurrency` handlers at once', async () => {
    let active = 0;
    let peak = 0;
    const { queue, worker } = setup({
      run: async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
      },
    });
    await queue.submitMany(Array.from({ length: 20 }, () => ({ type: 'job' })));
    for (let i = 0; i < 20; i++) await worker.tick();
    await worker.whenIdle();
    for (let i = 0; i < 10; i++) {
      await worker.tick();
      await worker.whenIdle();
    }
    expect(peak).toBe(4);
    expect((await queue.stats()).byStatus.SUCCEEDED).toBe(20);
  });
});

describe('Worker with prefetch', () => {
  it('claims up to concurrency + prefetch, runs at most concurrency, starts the rest in claim order', async () => {
    const started: number[] = [];
    const gates: Array<() => void> = [];
    const { queue, worker, store } = setup(
      { run: ({ payload }) => new Promise<void>((r) => { started.push((payload as { p: number }).p); gates.push(r); }) },
      {},
      { concurrency: 2, prefetch: 3 },
    );
    await queue.submitMany([5, 4, 3, 2, 1, 0].map((p) => ({ type: 'job', priority: p, payload: { p } })));
    expect(await worker.tick()).toBe(5); // 2 slots + 3 prefetched, in one claim
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([5, 4]);
    expect((await store.stats()).byStatus.SUBMITTING).toBe(5); // prefetched tasks hold their lease
    expect(await worker.tick()).toBe(0); // the buffer is full
    gates.shift()!();
    await new Promise((r) => setTimeout(r, 5));
    expect(started).toEqual([5, 4, 3]); // a freed slot takes the next prefetched task, not a new claim
    while (gates.length) {
      gates.shift()!();
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(started).toEqual([5, 4, 3, 2, 1, 0]); // the last one by a new claim as slots freed
    await worker.whenIdle();
    expect((await queue.stats()).byStatus.SUCCEEDED).toBe(6);
  });

  it('renews the leases of prefetched tasks while they wait for a slot', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { clock, queue, worker, store } = setup({ run: () => gate }, {}, { concurrency: 1, prefetch: 1, leaseMs: 90 });
    await queue.submitMany([{ type: 'job', priority: 1 }, { type: 'job' }]);
    expect(await worker.tick()).toBe(2);
    await expectLeasesKept(clock, store);
    release();
    await worker.whenIdle();
    expect((await queue.stats()).byStatus.SUCCEEDED).toBe(2);
  });

  it('stop() hands prefetched tasks that did not start back to the queue, even non-idempotent ones', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const calls: string[] = [];
    const { clock, queue, worker } = setup({ run: ({ task }) => { calls.push(task.id); return gate; } }, { idempotent: false }, { concurrency: 1, prefetch: 2 });
    const [a, b, c] = await queue.submitMany([3, 2, 1].map((priority) => ({ type: 'job', priority })));
    expect(await worker.tick()).toBe(3);
    clock.advance(1000); // a hand-back that set runAt = now would show
    const stopped = worker.stop();
    await new Promise((r) => setTimeout(r, 5));
    release();
    await stopped;
    expect(calls).toEqual([a.id]);
    expect((await queue.get(a.id))!.status).toBe(TaskStatus.SUCCEEDED);
    // released untouched: they never started, so no attempt is counted, runAt and error are kept
    for (const t of [b, c]) {
      expect((await queue.get(t.id))!).toMatchObject({ status: TaskStatus.PENDING_SUBMIT, leaseOwner: null, leaseId: null, attempts: 0, runAt: t.runAt, error: null });
    }
  });

  it('with claimsInFlight 2, sends a second claim for the slots the first did not ask for, never more in all', async () => {
    const { queue, worker, store } = setup({ run: () => new Promise<void>(() => undefined) }, {}, { concurrency: 2, prefetch: 4, batchSize: 4, claimsInFlight: 2, shutdownGraceMs: 1 });
    await queue.submitMany(Array.from({ length: 10 }, (_, i) => ({ type: 'job', priority: i })));
    const asked: number[] = [];
    const gates: Array<() => void> = [];
    const claim = store.claimSubmissions.bind(store);
    store.claimSubmissions = async (req) => {
      asked.push(req.limit);
      await new Promise<void>((r) => gates.push(r));
      return claim(req);
    };
    const ticks = [worker.tick(), worker.tick(), worker.tick()]; // each asks only for slots no other claim asked for
    await new Promise((r) => setImmediate(r));
    expect(asked.length).toBeGreaterThan(1); // several claims in flight at once
    expect(asked.reduce((x, y) => x + y, 0)).toBe(6); // concurrency + prefetch, not more
    expect(await worker.tick()).toBe(0); // nothing left to ask for
    gates.forEach((g) => g());
    expect((await Promise.all(ticks)).reduce((x, y) => x + y, 0)).toBe(6);
    expect((await store.stats()).byStatus.SUBMITTING).toBe(6);
    expect(worker.running).toBe(6);
    await worker.stop();
    expect(worker.running).toBe(2); // the 4 prefetched ones went back; the 2 stuck handlers remain
    expect((await store.stats()).byStatus.PENDING_SUBMIT).toBe(10); // and, past the grace period, the 2 idempotent stuck ones too
    const attempts = (await store.list({ status: TaskStatus.PENDING_SUBMIT, limit: 20 })).map((t) => t.attempts).sort();
    expect(attempts).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 1]); // only the 2 started ones count an attempt (retry); prefetched ones were released
  });

  it('rejects a negative or fractional prefetch', () => {
    expect(() => setup({ run: () => undefined }, {}, { prefetch: -1 })).toThrow(/Invalid option prefetch = -1: expected an integer >= 0\./);
    expect(() => setup({ run: () => undefined }, {}, { prefetch: 1.5 })).toThrow(/prefetch/);
    expect(() => setup({ run: () => undefined }, {}, { claimsInFlight: 0 })).toThrow(/Invalid option claimsInFlight = 0: expected an integer >= 1\./);
  });

  it('refuses every bad setting with a ValidationError naming it, timer periods a Node timer cannot hold included', () => {
    const bad: Array<[string, number]> = [
      ['concurrency', 0],
      ['batchSize', 2.5],
      ['leaseMs', 2 ** 31],
      ['idlePollMs', 0],
      ['recoverEveryMs', Number.NaN],
      ['shutdownGraceMs', -1],
      ['shutdownGraceMs', 2 ** 31],
    ];
    for (const [name, value] of bad) {
      let err: unknown = null;
      try {
        setup({ run: () => undefined }, {}, { [name]: value });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toContain(`Invalid option ${name} = ${value}`);
    }
  });
});

describe('Worker and cancel requests', () => {
  it('keeps the external id of a submit that was cancelled mid-flight, then cancels it at the provider', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const cancelled: string[] = [];
    const { queue, worker, step } = setup({
      submit: () => gate.then(() => 'ext-late'),
      poll: () => ({ done: false }),
      cancel: ({ externalId }) => { cancelled.push(externalId); },
    });
    const t = await queue.submit({ type: 'job' });
    await worker.tick();
    const requested = await queue.cancel(t.id); // while submit() runs: only a request
    expect(requested).toMatchObject({ status: TaskStatus.SUBMITTING, cancelRequested: true });
    release();
    await worker.whenIdle();
    expect((await queue.get(t.id))!).toMatchObject({ status: TaskStatus.SUBMITTED, externalId: 'ext-late' });
    await step();
    expect((await queue.get(t.id))!.status).toBe(TaskStatus.CANCELED);
    expect(cancelled).toEqual(['ext-late']);
  });
});

describe('Worker and store failures while writing an outcome', () => {
  /** The memory store whose complete() fails `failures` times with a driver-like error first. */
  class FlakyCompleteStore extends MemoryTaskStore {
    calls = 0;
    constructor(
      private failures: number,
      clock: ManualClock,
      private readonly failure: () => Error = () => new Error('Connection terminated unexpectedly'),
    ) {
      super({ clock });
    }
    override async complete(...args: Parameters<MemoryTaskStore['complete']>) {
      this.calls++;
      if (this.failures-- > 0) throw this.failure();
      return super.complete(...args);
    }
  }

  function flakySetup(failures: number, leaseMs = 30_000, failure?: () => Error) {
    const clock = new ManualClock();
    const store = new FlakyCompleteStore(failures, clock, failure);
    const registry = new TaskTypeRegistry();
    let runs = 0;
    registry.register('job', {}, { run: () => { runs++; return 'done'; } }, 'TestHandler');
    const errors: unknown[] = [];
    const worker = new Worker({ store, registry, events: new TaskEvents(), concurrency: 1, leaseMs, onError: (e) => errors.push(e) });
    const queue = new PriorityQueue({ store, registry });
    return { store, worker, queue, errors, runs: () => runs };
  }

  it('writes the outcome again after a store error instead of losing it (the task is not run twice)', async () => {
    const { store, worker, queue, errors, runs } = flakySetup(2);
    const t = await queue.submit({ type: 'job' });
    await worker.tick();
    await worker.whenIdle();
    expect((await queue.get(t.id))!).toMatchObject({ status: TaskStatus.SUCCEEDED, result: 'done', leaseId: null });
    expect(store.calls).toBe(3);
    expect(runs()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('reports the error and leaves the task to lease recovery when the store keeps failing for a whole lease', async () => {
    const { store, worker, queue, errors } = flakySetup(100, 2000);
    const t = await queue.submit({ type: 'job' });
    await worker.tick();
    await worker.whenIdle();
    expect(store.calls).toBe(4); // the write and three retries (at 50, 300 and 1300 ms; the next, at 2300, is past the lease)
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/Connection terminated/);
    expect((await queue.get(t.id))!.status).toBe(TaskStatus.SUBMITTING);
  });

  it('renews the lease between the tries: a write that fails for most of a lease still lands', async () => {
    // lease 2,600 ms from the claim; the handler returns at once. Tries at 0, 50, 300, 1300 ms
    // fail; the fifth, at 2300 ms, is past the lease as claimed less a renewal tick (2167 ms):
    // it goes only because the lease was renewed first
    const { store, worker, queue, errors, runs } = flakySetup(4, 2600);
    const t = await queue.submit({ type: 'job' });
    await worker.tick();
    await worker.whenIdle();
    expect((await queue.get(t.id))!).toMatchObject({ status: TaskStatus.SUCCEEDED, result: 'done', leaseId: null });
    expect(store.calls).toBe(5);
    expect(runs()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('retries only within one lease, and never a queue error', async () => {
    const short = flakySetup(100, 900); // 300 ms of waits: 50 + 250, not the 1000
    const t = await short.queue.submit({ type: 'job' });
    await short.worker.tick();
    await short.worker.whenIdle();
    expect(short.store.calls).toBe(3);
    expect(short.errors).toHaveLength(1);
    expect((await short.queue.get(t.id))!.status).toBe(TaskStatus.SUBMITTING);

    const queueError = flakySetup(1, 30_000, () => new InvalidStateError('task is not SUBMITTING'));
    await queueError.queue.submit({ type: 'job' });
    await queueError.worker.tick();
    await queueError.worker.whenIdle();
    expect(queueError.store.calls).toBe(1);
    expect(queueError.errors).toEqual([expect.any(InvalidStateError)]);
  });
});
