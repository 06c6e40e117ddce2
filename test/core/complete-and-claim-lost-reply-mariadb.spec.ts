/**
 * TaskStore.completeAndClaim on MariaDB (one transaction: the completes, then the claim) with a
 * real fault on its connection: a TCP proxy (test/support/tcp-proxy.ts) forwards a chosen
 * statement of that transaction and then drops the client's connection
 * (lost-reply-matchers.ts mysqlCompleteAndClaim):
 * - at COMMIT: the transaction committed, the client never saw the answer. A retry of the same
 *   call writes none of its completes again (each is refused by its fence: StaleLeaseError) and
 *   claims other tasks; the tasks the lost reply claimed stay leased until their lease expires
 *   and recovery puts them back (one failed attempt counted).
 * - before COMMIT (at the first claim statement): the server rolls the transaction back; nothing
 *   of it is written, not even the completes; the retry writes each complete once.
 * Then a Worker on a pool of one connection (so it sends its completes with its claims) loses
 * a combined reply at COMMIT while another worker drains the same queue, under per-key mutual
 * exclusion (concurrency-key limit 1) and an account concurrency limit: every handler runs
 * once, never two of one key or more than the account's limit at once, every task ends once.
 *
 * SQLite has no such fault: better-sqlite3 runs in the client's process, there is no connection
 * to lose a reply on (a statement's answer is the function's return). Its fault is a process
 * killed mid-transaction (test/chaos/sqlite.chaos.spec.ts).
 */
import {
  AdmissionControl,
  fenceOf,
  isTerminal,
  StaleLeaseError,
  TaskEvents,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  type CompletionOutcome,
  type NewTask,
  type Task,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import { mysqlCompleteAndClaim } from './support/lost-reply-matchers';
import { RealStores } from './support/real-stores';
import { plainTask } from '../support/new-task';

jest.setTimeout(120_000);

const stores = new RealStores();
afterAll(() => stores.closeAll());

let n = 0;
function newTasks(count: number, over: (i: number) => Partial<NewTask> = () => ({})): NewTask[] {
  const run = `${process.pid}-${++n}`;
  return Array.from({ length: count }, (_, i) => plainTask({ id: `cc-${run}-${i}`, payload: { i }, ...over(i) }));
}

/** Transitions into a terminal status, per task. */
async function terminalWrites(store: TaskStore, ids: readonly string[]): Promise<number[]> {
  return Promise.all(ids.map(async (id) => (await store.history(id)).filter((e) => isTerminal(e.to)).length));
}

const leasedTo = async (store: TaskStore, ids: readonly string[], owner: string): Promise<string[]> =>
  (await Promise.all(ids.map((id) => store.get(id)))).filter((t) => t?.status === TaskStatus.SUBMITTING && t.leaseOwner === owner).map((t) => t!.id);

const succeeded = (result: unknown): CompletionOutcome => ({ status: TaskStatus.SUCCEEDED, result });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('completeAndClaim on MariaDB, connection dropped mid-call', () => {
  it('reply lost after COMMIT: the retry writes no complete twice and claims other tasks; the lost claim comes back through recovery', async () => {
    const { store, proxy, again } = await stores.open('mariadb', { proxy: true, poolSize: 1 });
    const observer = (await again()).store;
    const tasks = newTasks(10);
    const ids = tasks.map((t) => t.id);
    await store.create(tasks);
    const held = (await store.claimSubmissions({ owner: 'w', limit: 3, leaseMs: 60_000 })).claimed;
    expect(held).toHaveLength(3);
    const completes = held.map((t) => ({ fence: fenceOf(t), outcome: succeeded({ by: 'first' }) }));

    const dropped = proxy!.dropAfter(mysqlCompleteAndClaim('commit'));
    await expect(store.completeAndClaim!(completes, { owner: 'w', limit: 2, leaseMs: 1000 })).rejects.toThrow();
    await dropped;
    // it committed: the completes are written, two more tasks are leased to 'w' (a claim nobody saw)
    expect((await Promise.all(held.map((t) => observer.get(t.id)))).map((t) => t!.status)).toEqual(held.map(() => TaskStatus.SUCCEEDED));
    const lost = await leasedTo(observer, ids, 'w');
    expect(lost).toHaveLength(2);

    // the retry of the same call: every complete refused by its fence, the claim takes other tasks
    const retry = await store.completeAndClaim!(
      completes.map((c) => ({ ...c, outcome: { ...c.outcome, result: { by: 'retry' } } })),
      { owner: 'w', limit: 2, leaseMs: 60_000 },
    );
    expect(retry.completed.map((a) => a.error?.constructor)).toEqual(held.map(() => StaleLeaseError));
    expect(retry.claim.claimed.map((t) => t.id).filter((id) => lost.includes(id) || held.some((h) => h.id === id))).toEqual([]);
    expect(retry.claim.claimed).toHaveLength(2);
    expect((await Promise.all(held.map((t) => observer.get(t.id)))).map((t) => t!.result)).toEqual(held.map(() => ({ by: 'first' })));
    expect(await terminalWrites(observer, held.map((t) => t.id))).toEqual([1, 1, 1]);

    // the lost claim's tasks: leased until their lease ends, then recovery hands them back once
    await sleep(1200);
    const recovered = await observer.recoverExpired(100);
    expect(recovered.map((r) => r.task.id).sort()).toEqual([...lost].sort());
    const back = await Promise.all(lost.map((id) => observer.get(id)));
    expect(back.map((t) => [t!.status, t!.attempts])).toEqual(lost.map(() => [TaskStatus.PENDING_SUBMIT, 1]));
  });

  it('dropped before COMMIT: nothing of the call is written (completes included); the retry writes each complete once', async () => {
    const { store, proxy, again } = await stores.open('mariadb', { proxy: true, poolSize: 1 });
    const observer = (await again()).store;
    const tasks = newTasks(10);
    const ids = tasks.map((t) => t.id);
    await store.create(tasks);
    const held = (await store.claimSubmissions({ owner: 'w', limit: 3, leaseMs: 60_000 })).claimed;
    const completes = held.map((t) => ({ fence: fenceOf(t), outcome: succeeded(null) }));

    const dropped = proxy!.dropAfter(mysqlCompleteAndClaim('claim'));
    await expect(store.completeAndClaim!(completes, { owner: 'w', limit: 2, leaseMs: 60_000 })).rejects.toThrow();
    await dropped;
    // rolled back: the held tasks are as they were (same lease, same version), nothing else leased
    const now = await Promise.all(held.map((t) => observer.get(t.id)));
    expect(now.map((t) => [t!.status, t!.leaseId, t!.version])).toEqual(held.map((t) => [TaskStatus.SUBMITTING, t.leaseId, t.version]));
    expect((await leasedTo(observer, ids, 'w')).sort()).toEqual(held.map((t) => t.id).sort());
    expect(await terminalWrites(observer, held.map((t) => t.id))).toEqual([0, 0, 0]);

    const retry = await store.completeAndClaim!(completes, { owner: 'w', limit: 2, leaseMs: 60_000 });
    expect(retry.completed.map((a) => a.task?.status)).toEqual(held.map(() => TaskStatus.SUCCEEDED));
    expect(retry.claim.claimed).toHaveLength(2);
    await expect(store.complete(completes[0].fence, completes[0].outcome)).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await terminalWrites(observer, held.map((t) => t.id))).toEqual([1, 1, 1]);
  });

  it('a Worker on one connection loses a combined reply at COMMIT beside another worker: every task runs once, ends once; no key or account limit exceeded', async () => {
    const KEYS = 24;
    const a = await stores.open('mariadb', { proxy: true, poolSize: 1 });
    const b = await a.again();
    const guard = new AdmissionControl(a.store);
    for (let k = 0; k < KEYS; k++) await guard.apply({ kind: 'concurrencyKey', key: `k${k}`, limit: 1 });
    await guard.apply({ kind: 'account', providerKey: 'p', accountId: 'acc', concurrency: 2 });
    // 240 tasks: a third on one account of 2 slots (the workers have 8), the rest under 24 mutually exclusive keys
    const tasks = newTasks(240, (i) => (i % 3 === 0 ? { accountId: 'acc', priority: i % 5 } : { concurrencyKey: `k${i % KEYS}`, priority: i % 5 }));
    const ids = tasks.map((t) => t.id);
    const byId = new Map(tasks.map((t) => [t.id, t]));
    await a.store.create(tasks);

    const calls: Array<{ id: string; begin: number; end: number }> = [];
    const registry = new TaskTypeRegistry();
    registry.register(
      'job',
      { idempotent: true },
      {
        run: async ({ task }) => {
          const begin = performance.now();
          await sleep(1 + (Number((task.payload as { i: number }).i) % 7) * 2);
          calls.push({ id: task.id, begin, end: performance.now() });
          return 1;
        },
      },
      'TestHandler',
    );
    const dropped = a.proxy!.dropAfter(mysqlCompleteAndClaim('commit'));
    const workers = [a.store, b.store].map(
      (store, i) => new Worker({ store, registry, events: new TaskEvents(), owner: `w${i}`, concurrency: 4, leaseMs: 1500, recoverEveryMs: 200, idlePollMs: 50, onError: () => undefined }),
    );
    for (const w of workers) await w.start();
    await dropped; // the fault did happen
    for (;;) {
      const all = await Promise.all(ids.map((id) => b.store.get(id)));
      if (all.every((t) => t && isTerminal(t.status))) break;
      await sleep(100);
    }
    for (const w of workers) await w.stop();
    const final = (await Promise.all(ids.map((id) => b.store.get(id)))) as Task[];
    expect(final.filter((t) => t.status !== TaskStatus.SUCCEEDED).map((t) => `${t.id} ${t.status}`)).toEqual([]);
    const runs = new Map<string, number>();
    for (const c of calls) runs.set(c.id, (runs.get(c.id) ?? 0) + 1);
    expect(ids.filter((id) => runs.get(id) !== 1)).toEqual([]); // the lost claim's tasks never reached a handler before recovery
    expect((await terminalWrites(b.store, ids)).filter((x) => x !== 1)).toEqual([]);
    expect(final.some((t) => t.attempts === 1)).toBe(true); // the lost claim went through recovery

    // at any instant: at most one call per key, at most 2 on the account (ends before begins at ties)
    const edges = calls.flatMap((c) => [{ t: c.begin, d: 1, task: byId.get(c.id)! }, { t: c.end, d: -1, task: byId.get(c.id)! }]).sort((x, y) => x.t - y.t || x.d - y.d);
    const use = new Map<string, number>();
    const over: string[] = [];
    for (const e of edges) {
      for (const [res, limit] of [e.task.accountId ? [`account ${e.task.accountId}`, 2] : [`key ${e.task.concurrencyKey}`, 1]] as Array<[string, number]>) {
        const u = (use.get(res) ?? 0) + e.d;
        use.set(res, u);
        if (u > limit) over.push(`${res}: ${u} at ${e.t}`);
      }
    }
    expect(over).toEqual([]);
  });
});
