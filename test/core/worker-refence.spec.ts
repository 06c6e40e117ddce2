/**
 * DESIGN §4: a renewal refused only because the version moved is not a lost lease. A cancel()
 * while a slow submit() runs moves the version; the next renewal is refused, re-reads the
 * task, re-fences and goes on: the provider's job is kept (externalId) and cancelled through
 * the handler's cancel hook. A refusal after the lease id changed, or once the lease expired,
 * still aborts the handler and drops its outcome.
 */
import {
  ManualClock,
  PriorityQueue,
  StaleLeaseError,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type TaskHandler,
} from '../../libs/priority-queue/src/core';
import { MemoryTaskStore } from '../../libs/priority-queue/src/stores/memory';
import { RealStores } from './support/real-stores';
import { abortOf, ended, watchRenewals } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

describe.each(['memory', 'redis', 'postgres', 'mariadb', 'sqlite'] as const)('Worker on %s: cancel() while a slow submit() runs', (kind) => {
  it('keeps the external id the provider gave, then calls the cancel hook with it: CANCELED, the submit neither aborted nor repeated', async () => {
    const { store } = await stores.open(kind);
    let cancelRequested = false;
    const renewals = watchRenewals(store, () => cancelRequested);
    let started!: () => void;
    const submitStarted = new Promise<void>((r) => (started = r));
    const calls = { submit: 0, poll: 0, aborted: false, cancelled: [] as string[] };
    const handler: TaskHandler = {
      // slower than leaseMs / 3: it outlives a renewal that comes after the cancel request
      submit: async ({ signal }) => {
        calls.submit++;
        started();
        await Promise.race([renewals.renewedAfter, abortOf(signal)]);
        calls.aborted ||= signal.aborted;
        signal.throwIfAborted();
        return { externalId: 'ext-7' };
      },
      poll: () => {
        calls.poll++;
        return { done: false };
      },
      cancel: ({ externalId }) => {
        calls.cancelled.push(externalId);
      },
    };
    const registry = new TaskTypeRegistry();
    registry.register('job', { pollIntervalMs: 20 }, handler, 'TestHandler');
    const events = new TaskEvents();
    const errors: unknown[] = [];
    const queue = new PriorityQueue({ store, registry, events });
    const worker = new Worker({ store, registry, events, concurrency: 1, leaseMs: 2400, recoverEveryMs: 200, idlePollMs: 50, onError: (e) => errors.push(e) });
    const t = await queue.submit({ type: 'job' });
    const end$ = ended(events, t.id);
    await worker.start();
    await submitStarted;
    const requested = await queue.cancel(t.id);
    expect(requested).toMatchObject({ status: TaskStatus.SUBMITTING, cancelRequested: true });
    cancelRequested = true;
    const end = await end$;
    await worker.stop();
    expect(renewals.refused.some((e) => e instanceof StaleLeaseError)).toBe(true); // a renewal did meet the moved version
    expect({ to: end.to, ...calls }).toEqual({ to: TaskStatus.CANCELED, submit: 1, poll: 0, aborted: false, cancelled: ['ext-7'] });
    expect(await store.get(t.id)).toMatchObject({ status: TaskStatus.CANCELED, externalId: 'ext-7', leaseId: null, nextPollAt: null });
    expect(errors).toEqual([]);
  });
});

describe('Worker: a refusal that is a lost lease still aborts', () => {
  function setup(leaseMs: number) {
    const clock = new ManualClock();
    const store = new MemoryTaskStore({ clock });
    const registry = new TaskTypeRegistry();
    let signal!: AbortSignal;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    registry.register('job', {}, { run: (ctx) => { signal = ctx.signal; return gate.then(() => 'late'); } }, 'TestHandler');
    const queue = new PriorityQueue({ store, registry });
    const worker = new Worker({ store, registry, concurrency: 1, leaseMs });
    return { clock, store, queue, worker, release, signal: () => signal };
  }

  it('when the lease expired (not yet recovered), a refusal for a moved version aborts and writes nothing', async () => {
    const { clock, store, queue, worker, release, signal } = setup(60);
    const t = await queue.submit({ type: 'job' });
    await worker.tick();
    await queue.cancel(t.id); // the version moves...
    clock.advance(61); // ...and the lease expires in store time; nobody recovers it yet
    const recover = store.recoverExpired.bind(store);
    store.recoverExpired = async () => [];
    await worker.sweep(); // the worker reads the store clock
    store.recoverExpired = recover;
    await new Promise<void>((r) => {
      const check = () => (signal().aborted ? r() : setTimeout(check, 5));
      check();
    });
    expect(signal().reason).toBeInstanceOf(StaleLeaseError);
    release();
    await worker.whenIdle();
    expect(await store.get(t.id)).toMatchObject({ status: TaskStatus.SUBMITTING, cancelRequested: true }); // the late result was not written
    expect((await store.recoverExpired(10)).map((x) => x.to)).toEqual([TaskStatus.CANCELED]);
  });
});
