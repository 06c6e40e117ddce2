import { TaskStatus, type NewTask, type QueueStats } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, nonZero } from '../harness';

/** One lane limited to 1 on every slot kind. */
const LANE: Partial<NewTask> = { providerKey: 'p', accountId: 'a', tenantId: 't', concurrencyKey: 'k' };

function held(s: QueueStats) {
  return {
    account: s.inFlightByAccount.filter((x) => x.count !== 0),
    tenant: nonZero(s.inFlightByTenant),
    key: nonZero(s.inFlightByConcurrencyKey),
  };
}

/**
 * DESIGN §3: a slot is freed when ITS task leaves SUBMITTING / SUBMITTED / RUNNING, never
 * twice, never by a task that did not hold it. A PENDING_SUBMIT task holds no slot, so its
 * cancel frees none, whichever lane it is in and whether it was due, delayed or parked.
 */
export function pendingCancelCases(ctx: ContractContext): void {
  it('cancelling pending tasks of a full account, tenant and key frees no slot: the next claims still refuse them', async () => {
    const h = await ctx.open();
    await h.setLimitsAll([
      { kind: 'account', providerKey: 'p', accountId: 'a', concurrency: 1 },
      { kind: 'tenant', tenantId: 't', quota: 1 },
    ]);
    const holder = await h.hold(LANE);
    const before = held(await h.store.stats());
    expect(before).toEqual({ account: [{ providerKey: 'p', accountId: 'a', count: 1 }], tenant: { t: 1 }, key: { k: 1 } });
    // pending tasks of every resource the holder holds: its own lane, one lane per resource,
    // one delayed; the first claim parks their lanes
    const pending = await h.create(
      LANE,
      { providerKey: 'p', accountId: 'a' },
      { providerKey: 'q', tenantId: 't' },
      { providerKey: 'r', concurrencyKey: 'k' },
      { ...LANE, delayMs: 1000 },
    );
    expect(await h.claim(10)).toEqual([]);
    for (const t of pending) expect((await h.store.cancel(t.id))?.status).toBe(TaskStatus.CANCELED);
    expect(held(await h.store.stats())).toEqual(before);
    const [z1, z2, z3, z4] = await h.create(
      { ...LANE, priority: 3 },
      { providerKey: 'p', accountId: 'a', priority: 2 },
      { providerKey: 'q', tenantId: 't', priority: 1 },
      { providerKey: 'r', concurrencyKey: 'k', priority: 0 },
    );
    expect(await h.claim(10)).toEqual([]);
    h.clock.advance(1000); // the cancelled delayed task would be due now
    expect(await h.claim(10)).toEqual([]);
    expect(held(await h.store.stats())).toEqual(before);
    // the holder's own end frees each slot once: the best waiting task takes all three again
    await h.complete(holder);
    expect(await h.claimIds(10)).toEqual([z1.id]);
    expect(held(await h.store.stats())).toEqual(before);
    expect((await h.store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(3);
    expect(ids(await h.listAll(TaskStatus.PENDING_SUBMIT)).sort()).toEqual([z2.id, z3.id, z4.id].sort());
  });

  it('a cancelled pending task never ran, so a later task of its lane gets the slot exactly when the holder ends', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'concurrencyKey', key: 'k', limit: 2 });
    await h.create({ concurrencyKey: 'k', priority: 9 }, { concurrencyKey: 'k', priority: 9 });
    const holders = await h.claim(10);
    expect(holders).toHaveLength(2);
    const h1 = holders[0];
    const waiting = await h.create(...Array.from({ length: 6 }, (_, i) => ({ concurrencyKey: 'k', priority: 5 - i })));
    for (const t of waiting.slice(0, 3)) await h.store.cancel(t.id);
    expect(await h.claim(10)).toEqual([]);
    await h.complete(h1);
    expect(await h.claimIds(10)).toEqual([waiting[3].id]);
    expect(await h.claim(10)).toEqual([]);
  });
}
