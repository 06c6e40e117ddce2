/**
 * DESIGN §4 with a real fault: a lease renewal runs on the server but its reply is lost (a TCP
 * proxy drops the client's connection right after forwarding it; test/support/tcp-proxy.ts).
 * - Redis: ioredis re-sends the renewal on its new connection with the old version; the server
 *   refuses it (the first one moved the version).
 * - PostgreSQL, MariaDB: the driver reports the dropped connection (the renewal committed:
 *   MariaDB's proxy drops after the renewal's COMMIT); the worker's fence is one version behind,
 *   so its next renewal is refused.
 * Either way the lease is still this worker's: the run must go on. Afterwards the handler ran
 * once, the task ends as the handler said, and its signal never fired.
 */
import {
  PriorityQueue,
  StaleLeaseError,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type Task,
  type TaskEvent,
  type TaskHandler,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import type { ChunkMatch } from '../support/tcp-proxy';
import { luaCall, pgPrepared } from './support/lost-reply-matchers';
import { RealStores, type StoreKind } from './support/real-stores';
import { abortOf, ended, watchRenewals } from './support/run-helpers';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

/** The chunks of one renewal, per store, as the client sends them. */
const RENEWAL: Partial<Record<StoreKind, () => ChunkMatch[]>> = {
  redis: () => luaCall('renew_lease'),
  postgres: () => pgPrepared('SET lease_until'),
  // the renewal's UPDATE, then its transaction's COMMIT (a COM_QUERY packet)
  mariadb: () => [(c) => c.includes('SET lease_until'), (c) => c.toString('latin1').endsWith('\x03COMMIT')],
};

/** Renewals every 800 ms: a loaded machine still renews well within the lease. */
const LEASE_MS = 2400;

/**
 * A worker on `store` whose renewals are watched: `renewedAfterDrop` resolves at the first
 * renewal that succeeds after the proxy dropped the connection; `refusals` lists refusals.
 */
function harness(store: TaskStore, handler: TaskHandler, idempotent: boolean, dropped: Promise<void>) {
  const registry = new TaskTypeRegistry();
  registry.register('job', { idempotent, pollIntervalMs: 20, maxAttempts: 5 }, handler, 'TestHandler');
  const events = new TaskEvents();
  const errors: unknown[] = [];
  let isDropped = false;
  void dropped.then(() => (isDropped = true));
  const renewals = watchRenewals(store, () => isDropped);
  const queue = new PriorityQueue({ store, registry, events });
  const worker = new Worker({ store, registry, events, concurrency: 1, leaseMs: LEASE_MS, recoverEveryMs: 200, idlePollMs: 50, onError: (e) => errors.push(e) });
  /** Submits one task, runs the worker until the task is terminal; its terminal event. */
  const runOne = async (): Promise<{ id: string; end: TaskEvent }> => {
    const t = await queue.submit({ type: 'job' });
    const end = ended(events, t.id);
    await worker.start();
    const e = await end;
    await worker.stop();
    return { id: t.id, end: e };
  };
  return { runOne, errors, refusals: renewals.refused, renewedAfterDrop: renewals.renewedAfter };
}

describe.each(['redis', 'postgres', 'mariadb'] as const)('Worker, lost renewal reply on %s', (kind) => {
  it('an idempotent one-shot task: the handler runs once, not aborted, and the task SUCCEEDED once', async () => {
    const { store, proxy } = await stores.open(kind, { proxy: true });
    const dropped = proxy!.dropAfter(RENEWAL[kind]!());
    let runs = 0;
    let aborted = false;
    const h = harness(
      store,
      {
        run: async ({ signal }) => {
          runs++;
          // the first run waits until a renewal went through after the lost reply (or its abort)
          if (runs === 1) await Promise.race([h.renewedAfterDrop, abortOf(signal)]);
          aborted ||= signal.aborted;
          signal.throwIfAborted();
          return { runs };
        },
      },
      true,
      dropped,
    );
    const { id, end } = await h.runOne();
    await dropped;
    expect(h.refusals.some((e) => e instanceof StaleLeaseError)).toBe(true); // the fault did happen
    expect({ runs, aborted, to: end.to }).toEqual({ runs: 1, aborted: false, to: TaskStatus.SUCCEEDED });
    expect(await store.get(id)).toMatchObject({ status: TaskStatus.SUCCEEDED, result: { runs: 1 }, attempts: 0 });
    expect(h.errors.filter((e) => e instanceof StaleLeaseError)).toEqual([]);
  });

  it('a non-idempotent provider task whose submit succeeded: SUBMITTED with its external id, polled to SUCCEEDED, never SUBMIT_UNKNOWN', async () => {
    const { store, proxy } = await stores.open(kind, { proxy: true });
    const dropped = proxy!.dropAfter(RENEWAL[kind]!());
    let submits = 0;
    let aborted = false;
    const h = harness(
      store,
      {
        submit: async ({ signal }) => {
          submits++;
          await Promise.race([h.renewedAfterDrop, abortOf(signal)]);
          aborted ||= signal.aborted;
          signal.throwIfAborted();
          return 'ext-1';
        },
        poll: () => ({ done: true, result: 'provider done' }),
      },
      false,
      dropped,
    );
    const { id, end } = await h.runOne();
    expect(h.refusals.some((e) => e instanceof StaleLeaseError)).toBe(true);
    expect({ submits, aborted, to: end.to }).toEqual({ submits: 1, aborted: false, to: TaskStatus.SUCCEEDED });
    const final = (await store.get(id)) as Task;
    expect(final).toMatchObject({ status: TaskStatus.SUCCEEDED, externalId: 'ext-1', result: 'provider done', attempts: 0, nextPollAt: null });
  });
});
