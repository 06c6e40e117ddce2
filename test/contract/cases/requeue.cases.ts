import { fenceOf, InvalidStateError, StaleLeaseError, TaskNotFoundError, TaskStatus, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, nonZero, T0, type Harness } from '../harness';

/** One task in each retryable status; the clock ends at T0 + 2000. */
async function finishedTasks(h: Harness): Promise<Record<'failed' | 'timedOut' | 'canceled' | 'unknown' | 'canceledInFlight', Task>> {
  const [failed, timedOut, canceled, unknown, canceledInFlight] = await h.create(
    { priority: 9, maxAttempts: 3, timeoutMs: 60_000, idempotencyKey: 'idem-failed' },
    { priority: 8, timeoutMs: 500 },
    { priority: 1, concurrencyKey: 'k-canceled' },
    { priority: 7, idempotent: false, providerKey: 'px', accountId: 'a1', tenantId: 't1' },
    { priority: 6 },
  );
  await h.store.cancel(canceled.id);
  const claimed = await h.claim(4, { leaseMs: 1000 });
  expect(ids(claimed)).toEqual([failed.id, timedOut.id, unknown.id, canceledInFlight.id]);
  // a provider task: submitted, polled, then failed (externalId, result, pollErrors set)
  const sub = await h.store.markSubmitted(fenceOf(claimed[0]), { externalId: 'ext-1', status: TaskStatus.SUBMITTED, pollDelayMs: 100 });
  h.clock.advance(100);
  const [polled] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
  expect(polled.id).toBe(sub.id);
  await h.store.recordPoll(fenceOf(polled), { status: TaskStatus.RUNNING, nextPollDelayMs: 100, pollErrors: 2, error: 'slow' });
  h.clock.advance(100);
  const [again] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
  expect(again.id).toBe(sub.id);
  await h.store.complete(fenceOf(again), { status: TaskStatus.FAILED, result: { partial: true }, error: 'provider said no' });
  await h.store.cancel(canceledInFlight.id);
  await h.store.complete(fenceOf(await h.mustGet(canceledInFlight.id)), { status: TaskStatus.CANCELED, error: 'canceled' });
  await h.store.complete(fenceOf(await h.mustGet(timedOut.id)), { status: TaskStatus.TIMED_OUT, error: 'deadline' });
  h.clock.set(T0 + 2000);
  const rec = await h.store.recoverExpired(10);
  expect(rec.map((r) => [r.task.id, r.to])).toEqual([[unknown.id, TaskStatus.SUBMIT_UNKNOWN]]);
  const out = {
    failed: await h.mustGet(failed.id),
    timedOut: await h.mustGet(timedOut.id),
    canceled: await h.mustGet(canceled.id),
    unknown: await h.mustGet(unknown.id),
    canceledInFlight: await h.mustGet(canceledInFlight.id),
  };
  expect(out.failed).toMatchObject({ status: TaskStatus.FAILED, externalId: 'ext-1', result: { partial: true }, pollErrors: 2 });
  expect(out.timedOut.status).toBe(TaskStatus.TIMED_OUT);
  expect(out.canceled.status).toBe(TaskStatus.CANCELED);
  expect(out.unknown.status).toBe(TaskStatus.SUBMIT_UNKNOWN);
  expect(out.canceledInFlight).toMatchObject({ status: TaskStatus.CANCELED, cancelRequested: true });
  return out;
}

export function requeueCases(ctx: ContractContext): void {
  it('FAILED, TIMED_OUT, CANCELED, SUBMIT_UNKNOWN -> PENDING_SUBMIT: a fresh attempt, priority kept, version + 1, one transition', async () => {
    const h = await ctx.open();
    const before = await finishedTasks(h);
    h.clock.set(T0 + 5000);
    for (const t of Object.values(before)) {
      const tr = await h.store.requeue(t.id);
      expect(tr.from).toBe(t.status);
      expect(tr.to).toBe(TaskStatus.PENDING_SUBMIT);
      const deadlineAt = t.deadlineAt === null ? null : T0 + 5000 + (t.deadlineAt - t.createdAt);
      const expected: Task = {
        ...t,
        status: TaskStatus.PENDING_SUBMIT,
        version: t.version + 1,
        attempts: 0,
        runAt: T0 + 5000,
        deadlineAt,
        error: null,
        result: null,
        externalId: null,
        nextPollAt: null,
        pollErrors: 0,
        cancelRequested: false,
        leaseOwner: null,
        leaseId: null,
        leaseUntil: null,
        finishedAt: null,
        updatedAt: T0 + 5000,
      };
      expect(tr.task).toEqual(expected);
      expect(await h.mustGet(t.id)).toEqual(expected);
    }
    const stats = await h.store.stats();
    expect(stats.byStatus[TaskStatus.PENDING_SUBMIT]).toBe(5);
    expect(stats.byStatus[TaskStatus.FAILED] + stats.byStatus[TaskStatus.CANCELED] + stats.byStatus[TaskStatus.TIMED_OUT] + stats.byStatus[TaskStatus.SUBMIT_UNKNOWN]).toBe(0);
    expect(nonZero(stats.inFlightByProvider)).toEqual({});
    // all of them are claimable again, in DESIGN §2 order (runAt = now for every one of them)
    expect(await h.claimIds(10)).toEqual([before.failed.id, before.timedOut.id, before.unknown.id, before.canceledInFlight.id, before.canceled.id]);
  });

  it('any other status -> InvalidStateError and nothing changes; a missing task -> TaskNotFoundError', async () => {
    const h = await ctx.open();
    const [pending, delayed, done, sub, claimedOne] = await h.create({ priority: -1 }, { delayMs: 10_000 }, { priority: 9 }, { priority: 8 }, { priority: 7 });
    const [c1, c2] = await h.claim(2);
    await h.complete(c1);
    await h.store.markSubmitted(fenceOf(c2), { externalId: 'e', status: TaskStatus.RUNNING, pollDelayMs: 1000 });
    expect(ids([c1, c2])).toEqual([done.id, sub.id]);
    const [c3] = await h.claim(1);
    expect(c3.id).toBe(claimedOne.id);
    for (const t of [pending, delayed, done, sub, claimedOne]) {
      const before = await h.mustGet(t.id);
      await expect(h.store.requeue(t.id)).rejects.toBeInstanceOf(InvalidStateError);
      expect(await h.mustGet(t.id)).toEqual(before);
    }
    await expect(h.store.requeue('00000000-0000-4000-8000-00000000dead')).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('order after a retry: a task of its priority that became due now (after those that waited longer, before later ones)', async () => {
    const h = await ctx.open();
    const [failing] = await h.create({ priority: 5 });
    const [c] = await h.claim(1);
    await h.complete(c, TaskStatus.FAILED);
    h.clock.advance(100);
    const [older, higher, lower] = await h.create({ priority: 5 }, { priority: 6 }, { priority: 4 });
    h.clock.advance(100);
    await h.store.requeue(failing.id);
    const [same, same2] = await h.create({ priority: 5 }, { priority: 5, delayMs: 0 });
    expect(await h.claimIds(10)).toEqual([higher.id, older.id, failing.id, same.id, same2.id, lower.id]);
  });

  it('slots: a requeued task holds none, takes its slots only when claimed again, and waits behind a full limit', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'concurrencyKey', key: 'flow', limit: 1 });
    const [a, b] = await h.create({ concurrencyKey: 'flow', priority: 2 }, { concurrencyKey: 'flow', priority: 1 });
    const [ca] = await h.claim(1);
    await h.complete(ca, TaskStatus.FAILED);
    const [cb] = await h.claim(1);
    expect(cb.id).toBe(b.id);
    await h.store.requeue(a.id);
    let stats = await h.store.stats();
    expect(nonZero(stats.inFlightByConcurrencyKey)).toEqual({ flow: 1 });
    expect(await h.claimIds(5)).toEqual([]); // the key is still held by b
    await h.complete(cb);
    expect(await h.claimIds(5)).toEqual([a.id]);
    stats = await h.store.stats();
    expect(nonZero(stats.inFlightByConcurrencyKey)).toEqual({ flow: 1 });
  });

  it('stale cases: a second retry is refused, the old lease is dead, the idempotency key still names the task, purge spares it', async () => {
    const h = await ctx.open();
    const [t] = await h.create({ idempotencyKey: 'order-42', maxAttempts: 2 });
    const [c] = await h.claim(1);
    const failed = await h.complete(c, TaskStatus.FAILED);
    const tr = await h.store.requeue(t.id);
    await expect(h.store.requeue(t.id)).rejects.toBeInstanceOf(InvalidStateError);
    // the fence of the finished attempt is stale for ever
    await expect(h.store.complete(fenceOf(c), { status: TaskStatus.SUCCEEDED })).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await h.mustGet(t.id)).toEqual(tr.task);
    // the key maps to the same task, now pending again
    const again = await h.store.create([h.newTask({ idempotencyKey: 'order-42', payload: t.payload, maxAttempts: 2 })]);
    expect(again[0]).toEqual({ task: tr.task, created: false });
    // purge never deletes it while it is live, nor by its old finish time
    h.clock.advance(10_000);
    expect(await h.store.purge(h.clock.now(), 100)).toBe(0);
    expect(await h.status(t.id)).toBe(TaskStatus.PENDING_SUBMIT);
    // a fresh attempt: attempts count from 0 again (maxAttempts 2 => one retry left after a lost lease)
    const [c2] = await h.claim(1, { leaseMs: 100 });
    expect(c2).toMatchObject({ id: t.id, attempts: 0, version: failed.version + 2 });
    h.clock.advance(100);
    expect((await h.store.recoverExpired(10)).map((x) => x.to)).toEqual([TaskStatus.PENDING_SUBMIT]);
    const [c3] = await h.claim(1);
    expect(c3.attempts).toBe(1);
    await h.complete(c3);
    // finished again: purged once, by its new finish time
    expect(await h.store.purge(h.clock.now() - 1, 100)).toBe(0);
    expect(await h.store.purge(h.clock.now(), 100)).toBe(1);
    expect(await h.store.get(t.id)).toBeNull();
    await expect(h.store.requeue(t.id)).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('concurrent retries of one task: exactly one wins', async () => {
    const h = await ctx.open();
    const tasks = await h.create(...Array.from({ length: 20 }, (_, i) => ({ priority: i, providerKey: `p${i % 4}`, tenantId: `t${i % 3}` })));
    const claimed = await h.claim(20);
    for (const c of claimed) await h.complete(c, TaskStatus.FAILED);
    const results = await Promise.allSettled(tasks.flatMap((t) => [h.store.requeue(t.id), h.store.requeue(t.id), h.store.requeue(t.id)]));
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok).toHaveLength(20);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(InvalidStateError);
    expect((await h.store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(20);
    expect(await h.claimIds(50)).toEqual(ids([...tasks].sort((a, b) => b.priority - a.priority)));
  });
}
