import { fenceOf, InvalidStateError, StaleLeaseError, TaskStatus } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, T0 } from '../harness';

export function lifecycleCases(ctx: ContractContext): void {
  it('markSubmitted: SUBMITTED or RUNNING, externalId, nextPollAt = now + pollDelayMs, lease cleared, slots kept', async () => {
    const h = await ctx.open();
    const [a, b] = await h.create({ concurrencyKey: 'k1' }, { concurrencyKey: 'k2' });
    await h.create({ concurrencyKey: 'k1' }, { concurrencyKey: 'k2' });
    const [ca, cb] = await h.claim(2);
    h.clock.advance(5);
    const sa = await h.store.markSubmitted(fenceOf(ca), { externalId: 'ext-a', status: TaskStatus.SUBMITTED, pollDelayMs: 2000 });
    const sb = await h.store.markSubmitted(fenceOf(cb), { externalId: 'ext-b', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    expect(sa).toMatchObject({ id: a.id, status: TaskStatus.SUBMITTED, externalId: 'ext-a', nextPollAt: T0 + 2005, leaseId: null, leaseOwner: null, leaseUntil: null, updatedAt: T0 + 5 });
    expect(sb).toMatchObject({ id: b.id, status: TaskStatus.RUNNING, externalId: 'ext-b', nextPollAt: T0 + 5 });
    expect(sa.version).toBeGreaterThan(ca.version);
    expect(await h.store.get(a.id)).toEqual(sa);
    expect(await h.claim(10)).toEqual([]); // k1 and k2 still held
    await expect(h.store.markSubmitted(fenceOf(ca), { externalId: 'again', status: TaskStatus.SUBMITTED, pollDelayMs: 0 })).rejects.toBeInstanceOf(StaleLeaseError);
  });

  it('claimPolls: due polls only (earliest nextPollAt first, limit), sets a lease, status and slots unchanged, a live lease excludes', async () => {
    const h = await ctx.open();
    const ts = await h.create({}, {}, {}, {}, {});
    const claimed = await h.claim(4);
    const delays = [300, 100, 200, 5000];
    for (const [i, t] of claimed.entries()) {
      await h.store.markSubmitted(fenceOf(t), { externalId: `e${i}`, status: i % 2 ? TaskStatus.RUNNING : TaskStatus.SUBMITTED, pollDelayMs: delays[i] });
    }
    expect(await h.store.claimPolls({ owner: 'w', limit: 10, leaseMs: 1000 })).toEqual([]);
    h.clock.advance(300);
    const first = await h.store.claimPolls({ owner: 'poller', limit: 2, leaseMs: 1000 });
    expect(ids(first)).toEqual([claimed[1].id, claimed[2].id]);
    for (const p of first) {
      const before = claimed.find((c) => c.id === p.id)!;
      expect(p).toMatchObject({ leaseOwner: 'poller', leaseUntil: T0 + 1300, status: before.id === claimed[1].id ? TaskStatus.RUNNING : TaskStatus.SUBMITTED });
      expect(typeof p.leaseId).toBe('string');
      expect(await h.store.get(p.id)).toEqual(p);
    }
    const second = await h.store.claimPolls({ owner: 'poller', limit: 10, leaseMs: 1000 });
    expect(ids(second)).toEqual([claimed[0].id]);
    expect(await h.store.claimPolls({ owner: 'poller', limit: 10, leaseMs: 1000 })).toEqual([]);
    // the pending 5th task was never a poll candidate and is still claimable as a submission
    expect(await h.claimIds(10)).toEqual([ts[4].id]);
  });

  it('recordPoll: status, nextPollAt = now + nextPollDelayMs, pollErrors, lease cleared', async () => {
    const h = await ctx.open();
    const t = await h.hold();
    await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
    const [p] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
    h.clock.advance(10);
    const r = await h.store.recordPoll(fenceOf(p), { status: TaskStatus.RUNNING, nextPollDelayMs: 700, pollErrors: 2, error: 'provider 503' });
    expect(r).toMatchObject({ status: TaskStatus.RUNNING, nextPollAt: T0 + 710, pollErrors: 2, leaseId: null, leaseOwner: null, leaseUntil: null, externalId: 'x' });
    expect(r.version).toBeGreaterThan(p.version);
    h.clock.advance(699);
    expect(await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 })).toEqual([]);
    h.clock.advance(1);
    const [p2] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
    const ok = await h.store.recordPoll(fenceOf(p2), { status: TaskStatus.RUNNING, nextPollDelayMs: 100, pollErrors: 0 });
    expect(ok.pollErrors).toBe(0);
  });

  it('complete: terminal status, result / error, finishedAt = now, lease cleared (one-shot and polled)', async () => {
    const h = await ctx.open();
    const [a, b] = await h.create({}, {});
    const [ca, cb] = await h.claim(2);
    h.clock.advance(20);
    const result = { items: [1, 'two', { three: 3 }], ok: true };
    const da = await h.store.complete(fenceOf(ca), { status: TaskStatus.SUCCEEDED, result });
    expect(da).toMatchObject({ id: a.id, status: TaskStatus.SUCCEEDED, result, finishedAt: T0 + 20, leaseId: null, leaseOwner: null, leaseUntil: null });
    expect(await h.store.get(a.id)).toEqual(da);
    const sb = await h.store.markSubmitted(fenceOf(cb), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    const [pb] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
    expect(pb.id).toBe(sb.id);
    const db = await h.store.complete(fenceOf(pb), { status: TaskStatus.FAILED, error: 'provider said no' });
    expect(db).toMatchObject({ id: b.id, status: TaskStatus.FAILED, error: 'provider said no', finishedAt: T0 + 20, externalId: 'x' });
    expect(await h.store.claimPolls({ owner: 'w', limit: 10, leaseMs: 1000 })).toEqual([]);
    expect(await h.claim(10)).toEqual([]);
  });

  it('retry: back to PENDING_SUBMIT with runAt = now + delayMs, attempts + 1, error kept, priority unchanged', async () => {
    const h = await ctx.open();
    const [t, other] = await h.create({ priority: 7 }, { priority: 1 });
    const [c] = await h.claim(1);
    h.clock.advance(100);
    const r = await h.store.retry(fenceOf(c), { delayMs: 500, error: 'HTTP 500' });
    expect(r).toMatchObject({ id: t.id, status: TaskStatus.PENDING_SUBMIT, attempts: 1, runAt: T0 + 600, error: 'HTTP 500', priority: 7, leaseId: null, leaseOwner: null, leaseUntil: null, finishedAt: null });
    expect(r.version).toBeGreaterThan(c.version);
    expect(await h.claimIds(10)).toEqual([other.id]);
    h.clock.advance(499);
    expect(await h.claim(10)).toEqual([]);
    h.clock.advance(1);
    const [again] = await h.claim(10);
    expect(again).toMatchObject({ id: t.id, attempts: 1 });
  });

  it('release: back to PENDING_SUBMIT untouched (attempts, runAt, error, priority kept), lease cleared, version + 1', async () => {
    const h = await ctx.open();
    const t = await h.createOne({ priority: 7 });
    const [c0] = await h.claim(1);
    h.clock.advance(100);
    await h.store.retry(fenceOf(c0), { delayMs: 0, error: 'HTTP 500' }); // attempts 1, runAt T0 + 100, an error
    h.clock.advance(50);
    const [c] = await h.claim(1);
    expect(c).toMatchObject({ id: t.id, attempts: 1, runAt: T0 + 100, error: 'HTTP 500' });
    h.clock.advance(25);
    const r = await h.store.release(fenceOf(c));
    expect(r).toEqual({ ...c, status: TaskStatus.PENDING_SUBMIT, leaseId: null, leaseOwner: null, leaseUntil: null, version: r.version, updatedAt: T0 + 175 });
    expect(r).toMatchObject({ attempts: 1, runAt: T0 + 100, error: 'HTTP 500', priority: 7, finishedAt: null });
    expect(r.version).toBeGreaterThan(c.version);
    expect(await h.store.get(t.id)).toEqual(r);
    // the old fence is spent: its lease is gone
    await expect(h.store.release(fenceOf(c))).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await h.store.get(t.id)).toEqual(r);
    const [again] = await h.claim(10);
    expect(again).toMatchObject({ id: t.id, attempts: 1, runAt: T0 + 100, status: TaskStatus.SUBMITTING });
  });

  for (const agingIntervalMs of [0, 1000]) {
    it(`release: the task competes again from its old place in the order (before later equal-priority tasks, aging ${agingIntervalMs})`, async () => {
      const h = await ctx.open({ agingIntervalMs });
      const a = await h.createOne({ priority: 3 });
      h.clock.advance(1);
      const b = await h.createOne({ priority: 3 }); // same lane as a
      h.clock.advance(1);
      const c = await h.createOne({ priority: 3, concurrencyKey: 'other-lane' });
      const [ca] = await h.claim(1);
      expect(ca.id).toBe(a.id);
      h.clock.advance(5000); // a retry (runAt = now) would now put a after b and c
      await h.store.release(fenceOf(ca));
      expect(await h.claimIds(1)).toEqual([a.id]);
      expect(await h.claimIds(10)).toEqual([b.id, c.id]);
    });
  }

  it('release: a stale fence (wrong lease id, wrong version, lease taken over) is refused with StaleLeaseError; nothing changes', async () => {
    const h = await ctx.open();
    const t = await h.hold({}, 1000);
    const stale = [
      { ...fenceOf(t), leaseId: 'not-the-lease' },
      { ...fenceOf(t), version: t.version + 1 },
      { ...fenceOf(t), version: t.version - 1 },
    ];
    for (const f of stale) {
      await expect(h.store.release(f)).rejects.toBeInstanceOf(StaleLeaseError);
      expect(await h.store.get(t.id)).toEqual(t);
    }
    h.clock.advance(1000);
    await h.store.recoverExpired(10);
    const [current] = await h.claim(1, { owner: 'new-owner' });
    expect(current.id).toBe(t.id);
    await expect(h.store.release(fenceOf(t))).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await h.store.get(t.id)).toEqual(current);
  });

  it('release frees the admission slots: the released task or another one of the account is claimable again', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a', concurrency: 1 });
    const [x, y] = await h.create({ accountId: 'a', priority: 2 }, { accountId: 'a', priority: 1 });
    const [cx] = await h.claim(10);
    expect(cx.id).toBe(x.id);
    expect(await h.claim(10)).toEqual([]); // y waits for the account slot
    expect((await h.store.stats()).inFlightByAccount.filter((r) => r.count !== 0)).toEqual([{ providerKey: 'p', accountId: 'a', count: 1 }]);
    await h.store.release(fenceOf(cx));
    expect((await h.store.stats()).inFlightByAccount.filter((r) => r.count !== 0)).toEqual([]);
    const [cx2] = await h.claim(10);
    expect(cx2.id).toBe(x.id); // the released task first, and only one: the slot is held again
    await h.store.release(fenceOf(cx2));
    await h.store.cancel(x.id);
    expect(await h.claimIds(10)).toEqual([y.id]);
  });

  it('release of a cancel-requested task: CANCELED (terminal), lease cleared, slots freed', async () => {
    const h = await ctx.open();
    const t = await h.hold({ concurrencyKey: 'k' });
    const next = await h.createOne({ concurrencyKey: 'k' });
    expect(await h.claim(10)).toEqual([]);
    const req = await h.store.cancel(t.id);
    h.clock.advance(7);
    const r = await h.store.release(fenceOf(req!));
    expect(r).toMatchObject({ id: t.id, status: TaskStatus.CANCELED, finishedAt: T0 + 7, attempts: 0, leaseId: null, leaseOwner: null, leaseUntil: null });
    expect(r.version).toBeGreaterThan(req!.version);
    expect(await h.store.get(t.id)).toEqual(r);
    expect(await h.claimIds(10)).toEqual([next.id]);
  });

  it('release applies to SUBMITTING only: a polled task is refused like retry refuses it (InvalidStateError), nothing changes', async () => {
    const h = await ctx.open();
    const t = await h.hold();
    await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    const [p] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
    await expect(h.store.retry(fenceOf(p), { delayMs: 0, error: 'x' })).rejects.toBeInstanceOf(InvalidStateError);
    await expect(h.store.release(fenceOf(p))).rejects.toBeInstanceOf(InvalidStateError);
    expect(await h.store.get(t.id)).toEqual(p);
  });

  it('cancel: a pending task (due or delayed) is CANCELED at once and never claimed', async () => {
    const h = await ctx.open();
    const [due, delayed, keep] = await h.create({ priority: 5 }, { priority: 5, delayMs: 100 }, {});
    h.clock.advance(3);
    const c1 = await h.store.cancel(due.id);
    const c2 = await h.store.cancel(delayed.id);
    for (const [c, t] of [
      [c1, due],
      [c2, delayed],
    ] as const) {
      expect(c).toMatchObject({ id: t.id, status: TaskStatus.CANCELED, finishedAt: T0 + 3 });
      expect(c!.version).toBe(t.version + 1);
      expect(await h.store.get(t.id)).toEqual(c);
    }
    h.clock.advance(100);
    expect(await h.claimIds(10)).toEqual([keep.id]);
  });

  it('cancel: an in-flight task gets cancelRequested (version + 1); a cancel-requested SUBMITTING task is retried into CANCELED', async () => {
    const h = await ctx.open();
    const t = await h.hold();
    const req = await h.store.cancel(t.id);
    expect(req).toMatchObject({ status: TaskStatus.SUBMITTING, cancelRequested: true, leaseId: t.leaseId, version: t.version + 1 });
    // the holder's old fence is stale (version moved); it re-reads and finalises with the same lease id
    await expect(h.store.retry(fenceOf(t), { delayMs: 0, error: 'x' })).rejects.toBeInstanceOf(StaleLeaseError);
    const r = await h.store.retry(fenceOf(req!), { delayMs: 0, error: 'x' });
    expect(r).toMatchObject({ status: TaskStatus.CANCELED, leaseId: null });
    expect(r.finishedAt).toBe(T0);
    expect(await h.claim(10)).toEqual([]);
  });

  it('cancel: a SUBMITTED task is handed to claimPolls at once (even before nextPollAt, even when paused) and finalised', async () => {
    const h = await ctx.open();
    const t = await h.hold({ concurrencyKey: 'k' });
    await h.create({ concurrencyKey: 'k' });
    await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 60_000 });
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    const req = await h.store.cancel(t.id);
    expect(req).toMatchObject({ status: TaskStatus.SUBMITTED, cancelRequested: true });
    const [p] = await h.store.claimPolls({ owner: 'w', limit: 10, leaseMs: 1000 });
    expect(p).toMatchObject({ id: t.id, cancelRequested: true });
    const done = await h.store.complete(fenceOf(p), { status: TaskStatus.CANCELED, error: 'canceled' });
    expect(done.status).toBe(TaskStatus.CANCELED);
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: false });
    expect(await h.claim(10)).toHaveLength(1);
  });

  it('cancel: a terminal task is unchanged; an unknown id gives null', async () => {
    const h = await ctx.open();
    const t = await h.hold();
    const done = await h.complete(t);
    expect(await h.store.cancel(t.id)).toEqual(done);
    expect(await h.store.get(t.id)).toEqual(done);
    expect(await h.store.cancel('00000000-0000-4000-8000-000000000002')).toBeNull();
  });
}
