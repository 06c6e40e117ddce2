import { fenceOf, StaleLeaseError, TaskNotFoundError, TaskStatus, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, T0 } from '../harness';

export function leaseCases(ctx: ContractContext): void {
  it('claim: SUBMITTING, owner, fresh lease id, leaseUntil = now + leaseMs, version + 1', async () => {
    const h = await ctx.open();
    const [a, b] = await h.create({}, {});
    h.clock.advance(7);
    const claimed = await h.claim(2, { owner: 'me', leaseMs: 4321 });
    expect(ids(claimed)).toEqual([a.id, b.id]);
    for (const [i, t] of claimed.entries()) {
      const before = [a, b][i];
      expect(t).toEqual({
        ...before,
        status: TaskStatus.SUBMITTING,
        leaseOwner: 'me',
        leaseId: expect.any(String),
        leaseUntil: T0 + 7 + 4321,
        version: before.version + 1,
        updatedAt: T0 + 7,
      });
      expect(await h.store.get(t.id)).toEqual(t);
    }
    expect(claimed[0].leaseId).not.toBe(claimed[1].leaseId);
    // a re-claim after recovery gets a new lease id
    h.clock.advance(4321);
    await h.store.recoverExpired(10);
    const again = await h.claim(1);
    expect(again[0].id).toBe(a.id);
    expect(again[0].leaseId).not.toBe(claimed[0].leaseId);
  });

  it('renewLease extends to now + leaseMs and keeps the task from expiring; stale renew changes nothing', async () => {
    const h = await ctx.open();
    const t = await h.hold({}, 1000);
    h.clock.advance(800);
    const renewed = await h.store.renewLease(fenceOf(t), 1000);
    expect(renewed).toMatchObject({ id: t.id, status: TaskStatus.SUBMITTING, leaseId: t.leaseId, leaseOwner: t.leaseOwner, leaseUntil: T0 + 1800 });
    expect(renewed.version).toBeGreaterThanOrEqual(t.version);
    expect(await h.store.get(t.id)).toEqual(renewed);
    h.clock.advance(800); // past the first leaseUntil, before the renewed one
    expect(await h.store.recoverExpired(10)).toEqual([]);
    expect(await h.status(t.id)).toBe(TaskStatus.SUBMITTING);
    const before = await h.mustGet(t.id);
    await expect(h.store.renewLease({ ...fenceOf(renewed), leaseId: 'not-the-lease' }, 5000)).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(h.store.renewLease({ ...fenceOf(renewed), version: renewed.version + 1 }, 5000)).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await h.store.get(t.id)).toEqual(before);
    const done = await h.complete(renewed);
    expect(done.status).toBe(TaskStatus.SUCCEEDED);
  });

  it('recoverExpired: an idempotent task back to PENDING_SUBMIT (attempts + 1, runAt and priority kept), only once the lease expired', async () => {
    const h = await ctx.open();
    const t = await h.hold({ priority: 42, delayMs: 0 }, 1000);
    h.clock.advance(999);
    expect(await h.store.recoverExpired(10)).toEqual([]);
    h.clock.advance(1);
    const tr = await h.store.recoverExpired(10);
    expect(tr).toHaveLength(1);
    expect(tr[0]).toMatchObject({ from: TaskStatus.SUBMITTING, to: TaskStatus.PENDING_SUBMIT });
    const back = await h.mustGet(t.id);
    expect(tr[0].task).toEqual(back);
    expect(back).toMatchObject({
      status: TaskStatus.PENDING_SUBMIT,
      attempts: 1,
      runAt: T0,
      priority: 42,
      leaseId: null,
      leaseOwner: null,
      leaseUntil: null,
      finishedAt: null,
    });
    expect(back.version).toBeGreaterThan(t.version);
    expect(await h.store.recoverExpired(10)).toEqual([]); // idempotent sweep
    const again = await h.claim(1);
    expect(again[0]).toMatchObject({ id: t.id, attempts: 1, status: TaskStatus.SUBMITTING });
  });

  it('recoverExpired: attempts exhausted -> FAILED; non-idempotent -> SUBMIT_UNKNOWN; cancel-requested -> CANCELED', async () => {
    const h = await ctx.open();
    const [twice, once, unsafe, canceled, fine] = await h.create(
      { maxAttempts: 2, priority: 5 },
      { maxAttempts: 1, priority: 4 },
      { idempotent: false, priority: 3 },
      { priority: 2 },
      { priority: 1 },
    );
    await h.claim(5, { leaseMs: 1000 });
    await h.store.cancel(canceled.id);
    h.clock.advance(999);
    await h.store.renewLease(fenceOf(await h.mustGet(fine.id)), 5000);
    h.clock.advance(1);
    const tr = await h.store.recoverExpired(10);
    const to = Object.fromEntries(tr.map((x) => [x.task.id, x.to]));
    expect(to).toEqual({
      [twice.id]: TaskStatus.PENDING_SUBMIT,
      [once.id]: TaskStatus.FAILED,
      [unsafe.id]: TaskStatus.SUBMIT_UNKNOWN,
      [canceled.id]: TaskStatus.CANCELED,
    });
    for (const id of [once.id, unsafe.id, canceled.id]) {
      expect(await h.mustGet(id)).toMatchObject({ finishedAt: T0 + 1000, leaseId: null });
    }
    expect(await h.status(fine.id)).toBe(TaskStatus.SUBMITTING);
    // the retried one expires again: now exhausted
    expect(await h.claimIds(5, { leaseMs: 1000 })).toEqual([twice.id]);
    h.clock.advance(1000);
    const tr2 = await h.store.recoverExpired(10);
    expect(tr2.map((x) => [x.task.id, x.from, x.to])).toEqual([[twice.id, TaskStatus.SUBMITTING, TaskStatus.FAILED]]);
  });

  it('recoverExpired: an expired poll lease is cleared without a transition, and the poll can be claimed again', async () => {
    const h = await ctx.open();
    const t = await h.hold();
    await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    const [p1] = await h.store.claimPolls({ owner: 'w1', limit: 10, leaseMs: 1000 });
    expect(await h.store.claimPolls({ owner: 'w2', limit: 10, leaseMs: 1000 })).toEqual([]);
    h.clock.advance(1000);
    expect(await h.store.recoverExpired(10)).toEqual([]);
    const cur = await h.mustGet(t.id);
    expect(cur).toMatchObject({ status: TaskStatus.RUNNING, leaseId: null });
    const [p2] = await h.store.claimPolls({ owner: 'w2', limit: 10, leaseMs: 1000 });
    expect(p2).toMatchObject({ id: t.id, leaseOwner: 'w2', status: TaskStatus.RUNNING });
    expect(p2.leaseId).not.toBe(p1.leaseId);
    await expect(h.complete(p1)).rejects.toBeInstanceOf(StaleLeaseError);
  });

  it('recoverExpired honours its limit', async () => {
    const h = await ctx.open();
    await h.create({}, {}, {}, {}, {});
    await h.claim(5, { leaseMs: 10 });
    h.clock.advance(10);
    expect(await h.store.recoverExpired(2)).toHaveLength(2);
    expect(await h.store.recoverExpired(10)).toHaveLength(3);
    expect(await h.store.recoverExpired(10)).toHaveLength(0);
    expect((await h.store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(5);
  });

  it('fencing: a stale writer (lease taken over) is rejected with StaleLeaseError on every fenced operation; nothing changes', async () => {
    const h = await ctx.open();
    const t = await h.hold({}, 1000);
    h.clock.advance(1000);
    await h.store.recoverExpired(10);
    const [current] = await h.claim(1, { owner: 'new-owner', leaseMs: 60_000 });
    expect(current.id).toBe(t.id);
    const before = await h.mustGet(t.id);
    const stale = fenceOf(t);
    const attempts: Array<[string, () => Promise<Task>]> = [
      ['renewLease', () => h.store.renewLease(stale, 1000)],
      ['markSubmitted', () => h.store.markSubmitted(stale, { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 0 })],
      ['recordPoll', () => h.store.recordPoll(stale, { status: TaskStatus.RUNNING, nextPollDelayMs: 0, pollErrors: 0 })],
      ['complete', () => h.store.complete(stale, { status: TaskStatus.SUCCEEDED, result: 1 })],
      ['retry', () => h.store.retry(stale, { delayMs: 0, error: 'x' })],
      ['release', () => h.store.release(stale)],
      ['wrong version', () => h.store.complete({ ...fenceOf(current), version: current.version - 1 }, { status: TaskStatus.SUCCEEDED })],
      ['wrong lease id', () => h.store.complete({ ...fenceOf(current), leaseId: stale.leaseId }, { status: TaskStatus.SUCCEEDED })],
    ];
    for (const [name, op] of attempts) {
      await expect(op().then(() => name)).rejects.toBeInstanceOf(StaleLeaseError);
      expect(await h.store.get(t.id)).toEqual(before);
    }
    const sub = await h.store.markSubmitted(fenceOf(current), { externalId: 'ext', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
    expect(sub.status).toBe(TaskStatus.SUBMITTED);
  });

  it('a fenced write on a task that does not exist is rejected', async () => {
    const h = await ctx.open();
    const op = h.store.complete({ id: '00000000-0000-4000-8000-000000000001', leaseId: 'l', version: 2 }, { status: TaskStatus.SUCCEEDED });
    await expect(op).rejects.toThrow();
    await op.catch((e) => expect(e instanceof StaleLeaseError || e instanceof TaskNotFoundError).toBe(true));
    await h.expectEmpty();
  });
}
