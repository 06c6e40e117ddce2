import { fenceOf, TaskStatus } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, T0 } from '../harness';

export function deadlineCases(ctx: ContractContext): void {
  it('a past-deadline pending task is TIMED_OUT by the claim, reported in timedOut, never claimed, and does not count toward the limit', async () => {
    const h = await ctx.open();
    const [e1, e2, good, later] = await h.create(
      { priority: 10, timeoutMs: 1000 }, // deadline exactly now after the advance
      { priority: 9, timeoutMs: 500 },
      { priority: 5, timeoutMs: 1001 },
      { priority: 0 },
    );
    h.clock.advance(1000);
    const res = await h.claimRaw(1);
    expect(ids(res.claimed)).toEqual([good.id]);
    expect(ids(res.timedOut).sort()).toEqual([e1.id, e2.id].sort());
    for (const t of res.timedOut) {
      expect(t).toMatchObject({ status: TaskStatus.TIMED_OUT, finishedAt: T0 + 1000, leaseId: null });
      expect(await h.store.get(t.id)).toEqual(t);
    }
    expect(await h.claimIds(10)).toEqual([later.id]);
  });

  it('timing out spends no rate token and takes no slot', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: 1, burst: 1 });
    await h.store.setLimits({ kind: 'tenant', tenantId: 't', quota: 1 });
    const [expired, fresh] = await h.create({ priority: 10, timeoutMs: 100, tenantId: 't', accountId: 'a', concurrencyKey: 'k' }, { tenantId: 't', accountId: 'a', concurrencyKey: 'k' });
    await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a', concurrency: 1 });
    h.clock.advance(100);
    const res = await h.claimRaw(5);
    expect(ids(res.timedOut)).toEqual([expired.id]);
    expect(ids(res.claimed)).toEqual([fresh.id]);
  });

  it('recoverExpired times out pending (also delayed) and unleased in-flight tasks past their deadline, freeing slots; a live lease is left alone', async () => {
    const h = await ctx.open();
    const [polled, leased, pending, delayed, ok] = await h.create(
      { priority: 9, timeoutMs: 1000, concurrencyKey: 'k' },
      { priority: 8, timeoutMs: 1000 },
      { priority: 0, timeoutMs: 1000 },
      { priority: 0, timeoutMs: 1000, delayMs: 5000 },
      { priority: 0, timeoutMs: 2000 },
    );
    await h.create({ priority: -1, concurrencyKey: 'k' });
    const claimed = await h.claim(2, { leaseMs: 10_000 });
    expect(ids(claimed)).toEqual([polled.id, leased.id]);
    await h.store.markSubmitted(fenceOf(claimed[0]), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 60_000 });
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true }); // claims must not be what times them out
    h.clock.advance(1000);
    const tr = await h.store.recoverExpired(100);
    expect(Object.fromEntries(tr.map((x) => [x.task.id, [x.from, x.to]]))).toEqual({
      [polled.id]: [TaskStatus.RUNNING, TaskStatus.TIMED_OUT],
      [pending.id]: [TaskStatus.PENDING_SUBMIT, TaskStatus.TIMED_OUT],
      [delayed.id]: [TaskStatus.PENDING_SUBMIT, TaskStatus.TIMED_OUT],
    });
    for (const x of tr) expect(x.task).toMatchObject({ status: TaskStatus.TIMED_OUT, finishedAt: T0 + 1000 });
    expect(await h.status(leased.id)).toBe(TaskStatus.SUBMITTING);
    expect(await h.status(ok.id)).toBe(TaskStatus.PENDING_SUBMIT);
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: false });
    // k was freed by the timeout of `polled`; the remaining candidates are ok and the k task
    const next = await h.claim(10);
    expect(next).toHaveLength(2);
    expect(ids(next)).toContain(ok.id);
  });
}
