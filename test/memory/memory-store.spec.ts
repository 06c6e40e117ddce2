import {
  fenceOf,
  INT32_MAX,
  INT32_MIN,
  ManualClock,
  StaleLeaseError,
  StoreClosedError,
  TaskNotFoundError,
  TaskStatus,
  ValidationError,
  type NewTask,
  type Task,
} from '../../libs/priority-queue/src/core';
import { MemoryTaskStore } from 'nestjs-priority-queue';
import { Harness, ids, T0 } from '../contract/harness';

/** The parts of the store's state these tests look at. */
interface Internals {
  ready: { size: number };
  lanes: { root: Map<string, unknown> };
  accounts: Map<string, unknown>;
  tenants: Map<string, unknown>;
  ckeys: Map<string, unknown>;
  buckets: Map<number, unknown>;
  tasks: Map<string, unknown>;
  byIdempotencyKey: Map<string, unknown>;
  rateParked: Set<unknown>;
  expiredPollLeases: Set<unknown>;
  finished: { length: number };
  kept: { sets: Map<string, Map<number, unknown>> };
}

function open(agingIntervalMs?: number): { h: Harness; store: MemoryTaskStore; inner: Internals } {
  const clock = new ManualClock(T0);
  const store = new MemoryTaskStore({ clock, agingIntervalMs });
  return { h: new Harness(store, clock), store, inner: internals(store) };
}

/** The state of the store's rooms (its TaskLifecycle, task-lifecycle.ts: scheduler, timers, counts). */
function internals(store: MemoryTaskStore): Internals {
  type Rooms = Pick<Internals, 'tasks' | 'byIdempotencyKey' | 'finished'> & {
    scheduler: Pick<Internals, 'ready' | 'lanes' | 'accounts' | 'tenants' | 'ckeys' | 'rateParked'>;
    timers: Pick<Internals, 'expiredPollLeases'>;
    counts: Pick<Internals, 'buckets'>;
  };
  const r = (store as unknown as { m: Rooms }).m;
  const kept = (store as unknown as Pick<Internals, 'kept'>).kept;
  return {
    ready: r.scheduler.ready,
    lanes: r.scheduler.lanes,
    accounts: r.scheduler.accounts,
    tenants: r.scheduler.tenants,
    ckeys: r.scheduler.ckeys,
    buckets: r.counts.buckets,
    tasks: r.tasks,
    byIdempotencyKey: r.byIdempotencyKey,
    rateParked: r.scheduler.rateParked,
    expiredPollLeases: r.timers.expiredPollLeases,
    finished: r.finished,
    kept,
  };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('MemoryTaskStore internals', () => {
  it('validates agingIntervalMs', () => {
    for (const bad of [-1, 1.5, 1_000_000_001, Number.NaN]) expect(() => new MemoryTaskStore({ agingIntervalMs: bad })).toThrow(ValidationError);
    expect(new MemoryTaskStore({ agingIntervalMs: 1_000_000_000 }).agingIntervalMs).toBe(1_000_000_000);
    expect(new MemoryTaskStore().agingIntervalMs).toBe(0);
  });

  it('parks a refused lane once and leaves it out of later claims until its slot frees', async () => {
    const { h, inner } = open();
    const blocked = await h.create(...Array.from({ length: 500 }, (): Partial<NewTask> => ({ concurrencyKey: 'k', priority: 10 })));
    const free = await h.create({ priority: 0 }, { priority: 0 });
    const first = await h.claim(3);
    expect(ids(first)).toEqual([blocked[0].id, free[0].id, free[1].id]);
    // the 499 refused tasks are one lane, parked on k: nothing left ready
    expect(inner.ready.size).toBe(0);
    expect(await h.claim(10)).toEqual([]);
    await h.complete(first[0]);
    expect(inner.ready.size).toBe(1);
    expect(ids(await h.claim(10))).toEqual([blocked[1].id]);
  });

  it('re-readies parked lanes when a limit is raised or removed and when a provider resumes', async () => {
    const { h, inner } = open();
    await h.store.setLimits({ kind: 'tenant', tenantId: 't', quota: 1 });
    await h.store.setLimits({ kind: 'provider', providerKey: 'q', paused: true });
    await h.create({ tenantId: 't' }, { tenantId: 't' }, { tenantId: 't', accountId: 'other-lane' }, { providerKey: 'q' });
    expect(await h.claim(10)).toHaveLength(1);
    expect(inner.ready.size).toBe(0);
    await h.store.setLimits({ kind: 'tenant', tenantId: 't', quota: null });
    expect(inner.ready.size).toBe(2);
    expect(await h.claim(10)).toHaveLength(2);
    await h.store.setLimits({ kind: 'provider', providerKey: 'q', burst: 3 }); // still paused
    expect(await h.claim(10)).toEqual([]);
    await h.store.setLimits({ kind: 'provider', providerKey: 'q', paused: false });
    expect(await h.claim(10)).toHaveLength(1);
  });

  it('a rate-parked provider waits for its retryAt, reported as nextWakeAt (ceil of a fractional time)', async () => {
    const { h, inner } = open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: 3 }); // 333.33 ms per token
    await h.create({}, {}, {}, { accountId: 'a' }, { tenantId: 't' });
    expect(await h.claim(10)).toHaveLength(1);
    const res = await h.claimRaw(10);
    expect(res.claimed).toEqual([]);
    expect(res.nextWakeAt).toBe(T0 + 334);
    expect(inner.rateParked.size).toBe(1);
    h.clock.set(T0 + 333);
    expect(await h.claim(10)).toEqual([]);
    h.clock.set(T0 + 334);
    expect(await h.claim(10)).toHaveLength(1);
  });

  it('nextWakeAt is the earliest delayed runAt when nothing is rate-parked, null when nothing waits', async () => {
    const { h } = open();
    expect((await h.claimRaw(5)).nextWakeAt).toBeNull();
    await h.create({ delayMs: 700 }, { delayMs: 300 });
    expect((await h.claimRaw(5)).nextWakeAt).toBe(T0 + 300);
  });

  it('every claim of a batch counts against the next, for each limit kind', async () => {
    const { h } = open();
    await h.setLimitsAll([
      { kind: 'provider', providerKey: 'p', accountConcurrency: 3, qps: 1000, burst: 7 },
      { kind: 'tenant', tenantId: 't', quota: 2 },
      { kind: 'concurrencyKey', key: 'k', limit: 4 },
    ]);
    await h.create(...Array.from({ length: 10 }, () => ({ accountId: 'a' })));
    await h.create(...Array.from({ length: 10 }, () => ({ tenantId: 't', providerKey: 'q' })));
    await h.create(...Array.from({ length: 10 }, () => ({ concurrencyKey: 'k', providerKey: 'r' })));
    await h.create(...Array.from({ length: 10 }, () => ({})));
    const got = await h.claim(100);
    const count = (f: (t: Task) => boolean) => got.filter(f).length;
    expect(count((t) => t.accountId === 'a')).toBe(3);
    expect(count((t) => t.tenantId === 't')).toBe(2);
    expect(count((t) => t.concurrencyKey === 'k')).toBe(4);
    expect(count((t) => t.providerKey === 'p')).toBe(7); // burst of p: 3 of account a + 4 plain
  });

  it('int32 extremes order exactly with the largest aging interval', async () => {
    const T = 1_000_000_000;
    const { h } = open(T);
    const [a, b, c] = await h.create({ priority: INT32_MIN }, { priority: INT32_MAX, delayMs: 1 }, { priority: INT32_MAX });
    h.clock.advance(1);
    expect(await h.claimIds(5)).toEqual([c.id, b.id, a.id]);
  });

  it('a poll lease expired but not yet recovered: claimPolls takes the task over; the old holder is fenced out', async () => {
    const { h, inner } = open();
    const t = await h.hold();
    await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    const [p1] = await h.store.claimPolls({ owner: 'w1', limit: 5, leaseMs: 100 });
    h.clock.advance(100);
    const [p2] = await h.store.claimPolls({ owner: 'w2', limit: 5, leaseMs: 100 });
    expect(p2.id).toBe(t.id);
    expect(inner.expiredPollLeases.size).toBe(0);
    await expect(h.store.recordPoll(fenceOf(p1), { status: TaskStatus.RUNNING, nextPollDelayMs: 0, pollErrors: 0 })).rejects.toBeInstanceOf(StaleLeaseError);
    await h.store.recordPoll(fenceOf(p2), { status: TaskStatus.RUNNING, nextPollDelayMs: 0, pollErrors: 0 });
  });

  it('a poll lease seen expired by claimPolls is cleared by recoverExpired; a renewal before that revives it', async () => {
    const { h, inner } = open();
    const [t1, t2] = await h.create({}, {});
    const claimed = await h.claim(2);
    for (const c of claimed) await h.store.markSubmitted(fenceOf(c), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 1000 });
    h.clock.advance(1000);
    const polls = await h.store.claimPolls({ owner: 'w1', limit: 5, leaseMs: 100 });
    expect(ids(polls).sort()).toEqual([t1.id, t2.id].sort());
    h.clock.advance(100);
    // a claim with limit 0 notices both expired leases without taking them
    expect(await h.store.claimPolls({ owner: 'w2', limit: 0, leaseMs: 100 })).toEqual([]);
    expect(inner.expiredPollLeases.size).toBe(2);
    const revived = await h.store.renewLease(fenceOf(polls.find((p) => p.id === t1.id)!), 500);
    expect(revived.leaseUntil).toBe(T0 + 1600);
    expect(inner.expiredPollLeases.size).toBe(1);
    expect(ids(await h.store.claimPolls({ owner: 'w3', limit: 0, leaseMs: 100 }))).toEqual([]);
    expect(await h.store.recoverExpired(10)).toEqual([]);
    expect(inner.expiredPollLeases.size).toBe(0);
    expect(await h.mustGet(t2.id)).toMatchObject({ leaseId: null, status: TaskStatus.RUNNING });
    expect(ids(await h.store.claimPolls({ owner: 'w3', limit: 5, leaseMs: 100 }))).toEqual([t2.id]);
  });

  it('subscribe: listeners are called once per turn after creates, freed slots, limit changes; unsubscribe stops them', async () => {
    const { h, store } = open();
    let calls = 0;
    const off = await store.subscribe(() => calls++);
    await h.create({}, {});
    await h.create({});
    await flush();
    expect(calls).toBe(1);
    const [c] = await h.claim(1);
    await flush();
    expect(calls).toBe(1); // a claim makes nothing claimable
    await h.complete(c);
    await flush();
    expect(calls).toBe(2);
    await store.setLimits({ kind: 'provider', providerKey: 'p', paused: false });
    await flush();
    expect(calls).toBe(3);
    await off();
    await h.create({});
    await flush();
    expect(calls).toBe(3);
  });

  it('a closed store rejects every operation with StoreClosedError', async () => {
    const { h, store } = open();
    await h.create({});
    await store.close();
    await expect(store.get('x')).rejects.toBeInstanceOf(StoreClosedError);
    await expect(store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 1 })).rejects.toBeInstanceOf(StoreClosedError);
    await expect(store.create([])).rejects.toBeInstanceOf(StoreClosedError);
  });

  it('a create that fails on a taken id leaves every index as before (lanes, counters, keys)', async () => {
    const { h, inner } = open();
    const existing = await h.createOne({ accountId: 'a', tenantId: 't', concurrencyKey: 'k', priority: 4 });
    const before = await h.store.stats();
    const batch = [
      h.newTask({ accountId: 'b', tenantId: 'u', concurrencyKey: 'j', idempotencyKey: 'fresh', priority: 9 }),
      h.newTask({ accountId: 'a', tenantId: 't', concurrencyKey: 'k' }),
      h.newTask({ id: existing.id, accountId: 'c' }),
    ];
    await expect(h.store.create(batch)).rejects.toThrow(/already taken/);
    expect(await h.store.stats()).toEqual(before);
    expect(inner.accounts.size).toBe(1);
    expect(inner.tenants.size).toBe(1);
    expect(inner.ckeys.size).toBe(1);
    expect(inner.byIdempotencyKey.size).toBe(0);
    expect(inner.tasks.size).toBe(1);
    expect(await h.mustGet(existing.id)).toEqual(existing);
    expect(await h.claimIds(5)).toEqual([existing.id]);
  });

  it('leaves no bookkeeping behind once every task finished and was purged', async () => {
    const { h, inner } = open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', accountConcurrency: 2 });
    const specs: Partial<NewTask>[] = [];
    for (let i = 0; i < 60; i++) {
      specs.push({ accountId: `a${i % 7}`, tenantId: `t${i % 5}`, concurrencyKey: i % 3 ? `k${i}` : null, priority: i % 4, delayMs: (i % 2) * 100, timeoutMs: i % 5 === 0 ? 50 : null });
    }
    await h.create(...specs);
    h.clock.advance(100);
    for (let round = 0; round < 100; round++) {
      const res = await h.claimRaw(7);
      if (res.claimed.length === 0 && res.timedOut.length === 0) break;
      for (const [i, t] of res.claimed.entries()) {
        if (i % 3 === 0) {
          const s = await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
          const [p] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 10 });
          expect(p.id).toBe(s.id);
          await h.complete(p);
        } else await h.complete(t);
      }
    }
    await h.store.recoverExpired(1000);
    const stats = await h.store.stats();
    expect(stats.byStatus[TaskStatus.PENDING_SUBMIT] + stats.byStatus[TaskStatus.SUBMITTING]).toBe(0);
    expect(await h.store.purge(T0 + 1_000_000, 1000)).toBe(60);
    expect(inner.tasks.size).toBe(0);
    expect(inner.lanes.root.size).toBe(0);
    expect(inner.accounts.size + inner.tenants.size + inner.ckeys.size + inner.buckets.size).toBe(0);
    expect(inner.ready.size).toBe(0);
  });
  it('keeps a private copy of a payload: every read is a fresh copy equal to a JSON round trip', async () => {
    const { h, store } = open();
    const tricky = JSON.parse('{"__proto__": {"x": 1}, "z": -0, "list": [1, "a", null, true, {"deep": [2.5]}], "o": {}}') as Record<string, unknown>;
    const input = { a: { b: [1, 2] }, tricky, when: new Date(T0) };
    const created = await h.createOne({ payload: input });
    expect(created.payload).toBe(input); // create hands the caller's own object back
    (input.a.b as number[]).push(3);
    tricky.z = 'changed';
    const x = await store.get(created.id);
    const y = await store.get(created.id);
    const expected = JSON.parse(JSON.stringify({ a: { b: [1, 2] }, tricky: JSON.parse('{"__proto__": {"x": 1}, "z": 0, "list": [1, "a", null, true, {"deep": [2.5]}], "o": {}}'), when: new Date(T0) }));
    expect(x!.payload).toEqual(expected);
    expect(Object.getPrototypeOf((x!.payload as { tricky: object }).tricky)).toBe(Object.prototype);
    expect(Object.is((x!.payload as { tricky: { z: number } }).tricky.z, 0)).toBe(true);
    expect(x!.payload).not.toBe(y!.payload);
    ((x!.payload as { a: { b: number[] } }).a.b as number[]).push(9);
    expect((await store.get(created.id))!.payload).toEqual(expected);
    const plain = await h.createOne({ payload: { n: 1, list: [{ s: 'x' }] } });
    const [claimed] = (await h.claimRaw(5)).claimed.filter((t) => t.id === plain.id);
    expect(claimed.payload).toEqual({ n: 1, list: [{ s: 'x' }] });
  });

  it('fences find the task from the slot in the lease id, and never trust a lease id that names another task', async () => {
    const { h, store } = open();
    const [a, b] = await h.create({}, {});
    const [ca, cb] = await h.claim(2);
    expect(ids([ca, cb])).toEqual([a.id, b.id]);
    const done = { status: TaskStatus.SUCCEEDED, result: null } as const;
    // b's lease id names b's slot: with a's id it is stale, with an unknown id not found
    await expect(store.complete({ id: ca.id, leaseId: cb.leaseId!, version: ca.version }, done)).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(store.complete({ id: 'nope', leaseId: ca.leaseId!, version: ca.version }, done)).rejects.toBeInstanceOf(TaskNotFoundError);
    // lease ids that name no slot at all fall back to the id map
    for (const leaseId of ['', '.', 'x', `${ca.leaseId}zzzzzzzzzz`, `${ca.leaseId}.`]) {
      await expect(store.complete({ id: ca.id, leaseId, version: ca.version }, done)).rejects.toBeInstanceOf(StaleLeaseError);
    }
    expect((await store.complete(fenceOf(ca), done)).status).toBe(TaskStatus.SUCCEEDED);
    // a purged task's slot is reused: the old fence names it, but the id differs
    await store.purge(Number.MAX_SAFE_INTEGER, 10);
    const [c] = await h.create({});
    await expect(store.complete(fenceOf(ca), done)).rejects.toBeInstanceOf(TaskNotFoundError);
    const [cc] = await h.claim(1);
    expect(cc.id).toBe(c.id);
    await expect(store.complete({ id: cc.id, leaseId: ca.leaseId!, version: cc.version }, done)).rejects.toBeInstanceOf(StaleLeaseError);
    expect((await store.complete(fenceOf(cb), done)).status).toBe(TaskStatus.SUCCEEDED);
    expect((await store.complete(fenceOf(cc), done)).status).toBe(TaskStatus.SUCCEEDED);
  });

  it('removal: tasks deleted at finish or trimmed by a count leave no entry behind (finished heap, kept sets, ids, keys)', async () => {
    const { h, inner } = open();
    for (let round = 0; round < 20; round++) {
      await h.create(...Array.from({ length: 200 }, (_, i) => ({ type: i % 2 ? 'gone' : 'counted', idempotencyKey: `k${round}-${i}` })));
      for (const t of await h.claim(200)) {
        h.clock.advance(1);
        await h.store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED, remove: t.type === 'gone' ? { now: true } : { now: false, count: 10, ageMs: null } });
      }
    }
    expect(inner.tasks.size).toBe(10);
    expect(inner.byIdempotencyKey.size).toBe(10);
    expect([...inner.kept.sets.values()].map((m) => m.size)).toEqual([10]);
    // dead entries are compacted away: the heap holds about the live ones, not the 4,000 finished
    expect(inner.finished.length).toBeLessThan(100);
  });
});
