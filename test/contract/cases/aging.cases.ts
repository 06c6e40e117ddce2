import { INT32_MAX, INT32_MIN, MAX_AGING_INTERVAL_MS, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, sortedIds } from '../harness';

export function agingCases(ctx: ContractContext): void {
  it('the store reports its aging interval', async () => {
    const h = await ctx.open({ agingIntervalMs: 1000 });
    expect(h.store.agingIntervalMs).toBe(1000);
  });

  it('order key is runAt - priority*T, ties by priority desc, then runAt, createdAt, seq', async () => {
    const h = await ctx.open({ agingIntervalMs: 1000 });
    const [a, b, c, d, e] = await h.create(
      { priority: 0 }, // key T0
      { priority: 5, delayMs: 4000 }, // key T0 - 1000
      { priority: 5, delayMs: 6000 }, // key T0 + 1000
      { priority: 1, delayMs: 1000 }, // key T0, higher priority than a
      { priority: 0 }, // key T0, after a by seq
    );
    h.clock.advance(6000);
    const claimed = await h.claimIds(10);
    expect(claimed).toEqual([b.id, d.id, a.id, e.id, c.id]);
  });

  it('without aging the same tasks order by priority first', async () => {
    const h = await ctx.open();
    const [a, b, c, d, e] = await h.create({ priority: 0 }, { priority: 5, delayMs: 4000 }, { priority: 5, delayMs: 6000 }, { priority: 1, delayMs: 1000 }, { priority: 0 });
    h.clock.advance(6000);
    expect(await h.claimIds(10)).toEqual([b.id, c.id, d.id, a.id, e.id]);
  });

  it('starvation bound: no task is overtaken by one that became due more than (p_other - p_self)*T after it', async () => {
    const T = 500;
    const h = await ctx.open({ agingIntervalMs: T });
    const r = rng(11);
    let pending: Task[] = [];
    const claimedAt = new Map<string, number>();
    const order: Task[] = [];
    for (let round = 0; round < 40; round++) {
      pending.push(...(await h.create(...Array.from({ length: r(6) }, () => ({ priority: r(7) - 3, delayMs: r(4000) })))));
      const k = r(4);
      const now = h.clock.now();
      const expected = sortedIds(
        pending.filter((t) => t.runAt <= now),
        T,
      ).slice(0, k);
      const got = await h.claim(k);
      expect(ids(got)).toEqual(expected);
      for (const t of got) {
        claimedAt.set(t.id, now);
        order.push(t);
      }
      const taken = new Set(ids(got));
      pending = pending.filter((t) => !taken.has(t.id));
      h.clock.advance(r(700));
    }
    expect(order.length).toBeGreaterThan(30);
    // explicit bound over every pair: x claimed before y while y was already due
    for (let i = 0; i < order.length; i++) {
      for (let j = i + 1; j < order.length; j++) {
        const x = order[i];
        const y = order[j];
        if (y.runAt <= claimedAt.get(x.id)!) expect(x.runAt - y.runAt).toBeLessThanOrEqual((x.priority - y.priority) * T);
      }
      // and nobody still pending and due was overtaken beyond the bound
    }
    const end = h.clock.now();
    for (const y of pending.filter((t) => t.runAt <= end)) {
      for (const x of order) {
        if (y.runAt <= claimedAt.get(x.id)!) expect(x.runAt - y.runAt).toBeLessThanOrEqual((x.priority - y.priority) * T);
      }
    }
  });

  it('exact 64-bit aged keys at int32 extremes with T = MAX_AGING_INTERVAL_MS (1 ms decides, a double cannot)', async () => {
    const T = MAX_AGING_INTERVAL_MS;
    const h = await ctx.open({ agingIntervalMs: T });
    const [a, b, c, d] = await h.create(
      { priority: INT32_MAX, delayMs: T + 1 }, // key T0 + T + 1 - MAX*T
      { priority: INT32_MAX - 1 }, // key T0 + T - MAX*T: one less than a, despite lower priority
      { priority: INT32_MIN }, // key T0 - MIN*T
      { priority: INT32_MIN + 1, delayMs: T + 1 }, // key T0 - MIN*T + 1: one more than c
    );
    h.clock.advance(T + 1);
    expect(await h.claimIds(10)).toEqual([b.id, a.id, c.id, d.id]);
  });

  it('changePriority re-keys an aged task', async () => {
    const h = await ctx.open({ agingIntervalMs: 1000 });
    const [a, b] = await h.create({ priority: 0 }, { priority: 0, delayMs: 1500 });
    await h.store.changePriority(b.id, 2); // key T0 + 1500 - 2000 < T0
    h.clock.advance(1500);
    expect(await h.claimIds(10)).toEqual([b.id, a.id]);
  });
}
