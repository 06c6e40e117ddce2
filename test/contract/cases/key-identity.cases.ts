import { TaskStatus } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids } from '../harness';

/**
 * Keys are compared exactly, code unit by code unit, on every store: two keys that differ only
 * in letter case or in Unicode normalisation form are two keys (their own limits, slots, stats
 * and idempotency), whatever the database's collation would say.
 */
export function keyIdentityCases(ctx: ContractContext, variants: ReadonlyArray<readonly [string, string]>): void {
  for (const [a, b] of variants) {
    const name = `${JSON.stringify(a)} and ${JSON.stringify(b)}`;

    it(`${name} are two tenants, accounts and concurrency keys: one held does not hold the other`, async () => {
      const h = await ctx.open();
      await h.setLimitsAll([
        { kind: 'tenant', tenantId: a, quota: 1 },
        { kind: 'tenant', tenantId: b, quota: 1 },
        { kind: 'account', providerKey: 'p', accountId: a, concurrency: 1 },
        { kind: 'account', providerKey: 'p', accountId: b, concurrency: 1 },
      ]);
      const held = await h.create({ tenantId: a, priority: 9 }, { accountId: a, priority: 8 }, { concurrencyKey: a, priority: 7 });
      expect(await h.claimIds(3)).toEqual(ids(held));
      const other = await h.create({ tenantId: b, priority: 3 }, { accountId: b, priority: 2 }, { concurrencyKey: b, priority: 1 });
      const blocked = await h.create({ tenantId: a, priority: 6 }, { accountId: a, priority: 5 }, { concurrencyKey: a, priority: 4 });
      expect(await h.claimIds(6)).toEqual(ids(other));
      const stats = await h.store.stats();
      expect(stats.inFlightByTenant).toEqual({ [a]: 1, [b]: 1 });
      expect(stats.inFlightByConcurrencyKey).toEqual({ [a]: 1, [b]: 1 });
      expect(stats.inFlightByAccount.map((x) => `${x.accountId}:${x.count}`).sort()).toEqual([`${a}:1`, `${b}:1`].sort());
      for (const t of blocked) expect(await h.status(t.id)).toBe(TaskStatus.PENDING_SUBMIT);
    });

    it(`${name} keep their own limits: setting one never changes the other`, async () => {
      const h = await ctx.open();
      await h.setLimitsAll([
        { kind: 'tenant', tenantId: a, quota: 5 },
        { kind: 'tenant', tenantId: b, quota: 1 },
        { kind: 'concurrencyKey', key: a, limit: 4 },
        { kind: 'concurrencyKey', key: b, limit: 2 },
        { kind: 'account', providerKey: 'p', accountId: a, concurrency: 3 },
        { kind: 'account', providerKey: 'p', accountId: b, concurrency: 1 },
      ]);
      const limits = await h.store.getLimits();
      expect(limits.tenants).toEqual({ [a]: 5, [b]: 1 });
      expect(limits.concurrencyKeys).toEqual({ [a]: 4, [b]: 2 });
      expect(Object.values(limits.accounts).map((x) => `${x.accountId}:${x.concurrency}`).sort()).toEqual([`${a}:3`, `${b}:1`].sort());
      await h.create(...Array.from({ length: 6 }, () => ({ tenantId: a })));
      expect(await h.claim(10)).toHaveLength(5);
    });

    it(`${name} are two providers (pausing one leaves the other) and two idempotency keys`, async () => {
      const h = await ctx.open();
      await h.store.setLimits({ kind: 'provider', providerKey: a, paused: true });
      const [pa, pb] = await h.create({ providerKey: a }, { providerKey: b });
      expect(await h.claimIds(2)).toEqual([pb.id]);
      const res = await h.store.create([h.newTask({ idempotencyKey: a }), h.newTask({ idempotencyKey: b })]);
      expect(res.map((r) => r.created)).toEqual([true, true]);
      expect(res[0].task.id).not.toBe(res[1].task.id);
      expect((await h.mustGet(pa.id)).providerKey).toBe(a);
    });
  }
}
