import { fenceOf, StaleLeaseError, TaskStatus, type NewTask, type QueueStats } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import type { Harness } from '../harness';
import { ids, nonZero } from '../harness';

/** One lane limited to 1 on every slot kind: account, tenant and concurrency key. */
const LANE: Partial<NewTask> = { accountId: 'a', tenantId: 't', concurrencyKey: 'k' };

async function limitLane(h: Harness): Promise<void> {
  await h.setLimitsAll([
    { kind: 'account', providerKey: 'p', accountId: 'a', concurrency: 1 },
    { kind: 'tenant', tenantId: 't', quota: 1 },
  ]);
}

function inFlight(s: QueueStats) {
  return {
    provider: nonZero(s.inFlightByProvider),
    account: s.inFlightByAccount.filter((x) => x.count !== 0),
    tenant: nonZero(s.inFlightByTenant),
    key: nonZero(s.inFlightByConcurrencyKey),
  };
}

const ONE = { provider: { p: 1 }, account: [{ providerKey: 'p', accountId: 'a', count: 1 }], tenant: { t: 1 }, key: { k: 1 } };
const NONE = { provider: {}, account: [], tenant: {}, key: {} };

export function slotCases(ctx: ContractContext): void {
  it('complete frees the slots (from SUBMITTING and from SUBMITTED)', async () => {
    const h = await ctx.open();
    await limitLane(h);
    const [t1, t2, t3] = await h.create(LANE, LANE, LANE);
    const [c1] = await h.claim(10);
    expect(c1.id).toBe(t1.id);
    expect(await h.claim(10)).toEqual([]);
    expect(inFlight(await h.store.stats())).toEqual(ONE);
    await h.complete(c1);
    const [c2] = await h.claim(10);
    expect(c2.id).toBe(t2.id);
    const sub = await h.store.markSubmitted(fenceOf(c2), { externalId: 'e', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    expect(await h.claim(10)).toEqual([]);
    const [polled] = await h.store.claimPolls({ owner: 'w', limit: 5, leaseMs: 1000 });
    expect(polled.id).toBe(sub.id);
    await h.complete(polled, TaskStatus.FAILED);
    expect(await h.claimIds(10)).toEqual([t3.id]);
  });

  it('retry frees the slots', async () => {
    const h = await ctx.open();
    await limitLane(h);
    const [, t2] = await h.create(LANE, { ...LANE, priority: -1 });
    const [c1] = await h.claim(10);
    await h.store.retry(fenceOf(c1), { delayMs: 10_000, error: 'try later' });
    expect(inFlight(await h.store.stats())).toEqual(NONE);
    expect(await h.claimIds(10)).toEqual([t2.id]);
  });

  it('cancel frees the slots only when finalised', async () => {
    const h = await ctx.open();
    await limitLane(h);
    const [, t2] = await h.create(LANE, LANE);
    const [c1] = await h.claim(10);
    await h.store.markSubmitted(fenceOf(c1), { externalId: 'e', status: TaskStatus.SUBMITTED, pollDelayMs: 60_000 });
    const requested = await h.store.cancel(c1.id);
    expect(requested).toMatchObject({ status: TaskStatus.SUBMITTED, cancelRequested: true });
    expect(await h.claim(10)).toEqual([]);
    const [polled] = await h.store.claimPolls({ owner: 'w', limit: 5, leaseMs: 1000 });
    expect(polled.id).toBe(c1.id);
    await h.complete(polled, TaskStatus.CANCELED);
    expect(await h.claimIds(10)).toEqual([t2.id]);
  });

  it('lease expiry (recoverExpired) frees the slots', async () => {
    const h = await ctx.open();
    await limitLane(h);
    const [t1] = await h.create(LANE, LANE);
    await h.claim(10, { leaseMs: 1000 });
    h.clock.advance(1000);
    await h.store.recoverExpired(100);
    expect(inFlight(await h.store.stats())).toEqual(NONE);
    expect(await h.claimIds(10)).toEqual([t1.id]); // back in the order with its old runAt
  });

  it('never freed twice: stale complete / retry / renew, cancel of a finished task and repeated recovery leave the count unchanged', async () => {
    const h = await ctx.open();
    await limitLane(h);
    const [t1, t2, t3] = await h.create(LANE, LANE, LANE);
    const [c1] = await h.claim(10, { leaseMs: 1000 });
    const done = await h.complete(c1);
    await expect(h.complete(c1)).rejects.toBeInstanceOf(StaleLeaseError);
    const [c2] = await h.claim(10, { leaseMs: 1000 });
    expect(c2.id).toBe(t2.id);
    await expect(h.complete(c1)).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(h.store.retry(fenceOf(c1), { delayMs: 0, error: 'x' })).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await h.store.cancel(t1.id)).toEqual(done);
    expect(await h.claim(10)).toEqual([]);
    expect(inFlight(await h.store.stats())).toEqual(ONE);

    // t2's lease expires and is recovered; its old holder then writes with the stale fence
    h.clock.advance(1000);
    expect((await h.store.recoverExpired(100)).map((x) => [x.task.id, x.to])).toEqual([[t2.id, TaskStatus.PENDING_SUBMIT]]);
    expect(await h.store.recoverExpired(100)).toEqual([]);
    await expect(h.complete(c2)).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(h.store.retry(fenceOf(c2), { delayMs: 0, error: 'x' })).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(h.store.renewLease(fenceOf(c2), 1000)).rejects.toBeInstanceOf(StaleLeaseError);
    expect(inFlight(await h.store.stats())).toEqual(NONE);
    const again = await h.claim(10);
    expect(ids(again)).toEqual([t2.id]);
    expect(await h.claim(10)).toEqual([]);
    await h.complete(again[0]);
    expect(await h.claimIds(10)).toEqual([t3.id]);
    expect(await h.claim(10)).toEqual([]);
  });
}
