/**
 * What a handler hands back, through a running worker on every store: error texts with NUL or
 * lone surrogates, very long errors, external ids the SQL columns cannot hold, results JSON
 * cannot carry, delays that are NaN / Infinity / fractions, poll answers of the wrong shape.
 * Each ends as the handler's outcome says, the same on every store, with the handler run once
 * and nothing for onError. Before core/handler-output.ts the outcome's write failed on some
 * stores (PostgreSQL: NUL, bigint "NaN" / "1.5"; PostgreSQL and MariaDB: external id over 1024
 * characters; MariaDB: a lone surrogate), so the task waited for its lease to expire and the
 * handler ran again (a provider got the same job up to maxAttempts times), or a poll looped.
 */
import {
  MAX_ERROR_CHARS,
  MAX_EXTERNAL_ID_CHARS,
  NotSubmittedError,
  PriorityQueue,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type PollResult,
  type TaskHandler,
  type TaskStore,
  type TaskTypeOptions,
} from '../../libs/priority-queue/src/core';
import { RealStores, type StoreKind } from './support/real-stores';
import { ended } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

/**
 * Runs one task of `handler` on a started worker until it is terminal, or until the worker
 * reports an error (a failed write: the test fails at once instead of waiting for the lease).
 */
async function runOne(store: TaskStore, handler: TaskHandler, options: TaskTypeOptions = {}) {
  const registry = new TaskTypeRegistry();
  registry.register('job', { backoff: { baseMs: 1, maxMs: 2 }, pollIntervalMs: 5, maxPollIntervalMs: 10, ...options }, handler, 'TestHandler');
  const events = new TaskEvents();
  const errors: unknown[] = [];
  let failed!: () => void;
  const failed$ = new Promise<void>((r) => (failed = r));
  const queue = new PriorityQueue({ store, registry, events });
  const worker = new Worker({ store, registry, events, leaseMs: 20_000, idlePollMs: 20, onError: (e) => (errors.push(e), failed()) });
  const t = await queue.submit({ type: 'job' });
  const end$ = ended(events, t.id);
  await worker.start();
  await Promise.race([end$, failed$]);
  await worker.stop();
  expect(errors.map(String)).toEqual([]);
  return (await store.get(t.id))!;
}

function counted<A extends unknown[], R>(f: (...a: A) => R): ((...a: A) => R) & { calls: number } {
  const g = Object.assign((...a: A) => (g.calls++, f(...a)), { calls: 0 });
  return g;
}

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as StoreKind[])('what a handler hands back, on %s', (kind) => {
  it('an error text with NUL and lone surrogates is stored with U+FFFD in their place', async () => {
    const { store } = await stores.open(kind);
    const run = counted(() => {
      throw new Error('bad\u0000thing \ud800 \udfff end \u{1F600}');
    });
    const task = await runOne(store, { run }, { maxAttempts: 1 });
    expect({ runs: run.calls, status: task.status, error: task.error }).toEqual({
      runs: 1,
      status: TaskStatus.FAILED,
      error: 'bad\uFFFDthing \uFFFD \uFFFD end \u{1F600}',
    });
  });

  it('a very long error is cut to MAX_ERROR_CHARS with a note; a poll that fails with a non-string says what it got', async () => {
    const { store } = await stores.open(kind);
    const run = counted(() => {
      throw new Error('x'.repeat(3_000_000));
    });
    const task = await runOne(store, { run }, { maxAttempts: 1 });
    expect(run.calls).toBe(1);
    expect(task.error).toBe(`${'x'.repeat(MAX_ERROR_CHARS)}... (${3_000_000 - MAX_ERROR_CHARS} more characters cut)`);

    const other = await stores.open(kind);
    const polled = await runOne(other.store, { submit: () => 'job-1', poll: () => ({ done: true, failed: { code: 5 } }) as unknown as PollResult });
    expect({ status: polled.status, error: polled.error }).toEqual({ status: TaskStatus.FAILED, error: '{"code":5}' });
  });

  it.each([
    ['too long', 'j'.repeat(MAX_EXTERNAL_ID_CHARS + 1)],
    ['with a NUL', 'job\u00001'],
    ['with a lone surrogate', 'job\ud8001'],
  ])('an external id %s: FAILED at once with a message, submit() called once, never polled', async (_, externalId) => {
    const { store } = await stores.open(kind);
    const submit = counted(() => externalId);
    const poll = counted((): PollResult => ({ done: true }));
    const task = await runOne(store, { submit, poll }, { maxAttempts: 3 });
    expect({ submits: submit.calls, polls: poll.calls, status: task.status, externalId: task.externalId }).toEqual({
      submits: 1,
      polls: 0,
      status: TaskStatus.FAILED,
      externalId: null,
    });
    expect(task.error).toMatch(/returned the external id .* which cannot be stored/);
    expect(task.attempts).toBe(1);
  });

  it('an external id of MAX_EXTERNAL_ID_CHARS characters (astral ones too) is kept whole', async () => {
    const { store } = await stores.open(kind);
    const externalId = '\u{1F600}'.repeat(MAX_EXTERNAL_ID_CHARS / 4) + 'é'.repeat(MAX_EXTERNAL_ID_CHARS / 2);
    const seen: string[] = [];
    const task = await runOne(store, { submit: () => externalId, poll: ({ externalId: id }) => (seen.push(id), { done: true }) });
    expect({ status: task.status, same: task.externalId === externalId, polledWith: seen.map((s) => s === externalId) }).toEqual({
      status: TaskStatus.SUCCEEDED,
      same: true,
      polledWith: [true],
    });
  });

  it.each([
    ['a BigInt', () => ({ total: 1n })],
    ['a cycle', () => { const o: Record<string, unknown> = {}; o.self = o; return o; }],
  ])('a result with %s: FAILED at once with a message, run() called once', async (_, make) => {
    const { store } = await stores.open(kind);
    const run = counted(make);
    const task = await runOne(store, { run }, { maxAttempts: 3 });
    expect({ runs: run.calls, status: task.status }).toEqual({ runs: 1, status: TaskStatus.FAILED });
    expect(task.error).toMatch(/^run\(\) of "job" returned a result that is not JSON-serialisable/);

    const other = await stores.open(kind);
    const polled = await runOne(other.store, { submit: () => 'job-1', poll: () => ({ done: true, result: make() }) });
    expect(polled.status).toBe(TaskStatus.FAILED);
    expect(polled.error).toMatch(/^poll\(\) of "job" returned a result that is not JSON-serialisable/);
  });

  it('poll delays NaN, a fraction and -Infinity, and answers of the wrong shape, are polled again and finish', async () => {
    const { store } = await stores.open(kind);
    const answers: unknown[] = [
      { done: false, nextPollMs: NaN }, // the type's poll interval
      { done: false, nextPollMs: 1.5 }, // 2 ms
      { done: false, nextPollMs: -Infinity }, // at once
      undefined, // a poll error: back-off
      { status: 'done' },
      { done: true, result: { pages: 3 } },
    ];
    const poll = counted(() => answers.shift() as PollResult);
    const task = await runOne(store, { submit: () => 'job-1', poll });
    expect({ polls: poll.calls, status: task.status, result: task.result, pollErrors: task.pollErrors }).toEqual({
      polls: 6,
      status: TaskStatus.SUCCEEDED,
      result: { pages: 3 },
      pollErrors: 2,
    });
  });

  it('NotSubmittedError with retryAfterMs NaN retries after the back-off; with Infinity, after the longest delay', async () => {
    const { store } = await stores.open(kind);
    const run = counted(() => {
      if (run.calls === 1) throw new NotSubmittedError('429', NaN);
      return 'ok';
    });
    const task = await runOne(store, { run });
    expect({ runs: run.calls, status: task.status, attempts: task.attempts }).toEqual({ runs: 2, status: TaskStatus.SUCCEEDED, attempts: 1 });

    const other = await stores.open(kind);
    const registry = new TaskTypeRegistry();
    registry.register('job', {}, { run: () => { throw new NotSubmittedError('429', Infinity); } }, 'TestHandler');
    const events = new TaskEvents();
    const errors: unknown[] = [];
    const queue = new PriorityQueue({ store: other.store, registry, events });
    const worker = new Worker({ store: other.store, registry, events, idlePollMs: 20, onError: (e) => errors.push(e) });
    const t = await queue.submit({ type: 'job' });
    const back = new Promise<void>((r) => events.on((e) => e.taskId === t.id && e.from === TaskStatus.SUBMITTING && r()));
    await worker.start();
    await back;
    await worker.stop();
    const after = (await other.store.get(t.id))!;
    const now = await other.store.now();
    expect({ status: after.status, attempts: after.attempts, errors }).toEqual({ status: TaskStatus.PENDING_SUBMIT, attempts: 1, errors: [] });
    expect(after.runAt - now).toBeGreaterThan(9 * 365 * 24 * 3600 * 1000);
  });
});
