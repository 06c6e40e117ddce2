import { INT32_MAX, INT32_MIN, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, shuffle, sortedIds, T0 } from '../harness';

export function orderCases(ctx: ContractContext): void {
  const PRIORITIES = [0, 5, -3, INT32_MAX, INT32_MIN, 1, INT32_MAX - 1, INT32_MIN + 1, -1, 1_000_000, -1_000_000, 2 ** 30, -(2 ** 30)];

  it('priority descending over the full int32 range, in one batch', async () => {
    const h = await ctx.open();
    const r = rng(1);
    const shuffled = shuffle(PRIORITIES, r);
    const tasks = await h.create(...shuffled.map((priority) => ({ priority })));
    const claimed = await h.claim(100);
    expect(claimed.map((t) => t.priority)).toEqual([...PRIORITIES].sort((a, b) => b - a));
    expect(ids(claimed)).toEqual(sortedIds(tasks));
    expect(await h.claim(100)).toEqual([]);
  });

  it('priority descending, one claim at a time', async () => {
    const h = await ctx.open();
    const tasks = await h.create(...PRIORITIES.map((priority) => ({ priority })));
    const got: string[] = [];
    for (let i = 0; i < PRIORITIES.length; i++) got.push(...(await h.claimIds(1)));
    expect(got).toEqual(sortedIds(tasks));
    expect(await h.claim(1)).toEqual([]);
  });

  it('equal priority: runAt ascending (also at int32 extremes)', async () => {
    const h = await ctx.open();
    const delays = [300, 100, 200, 0, 1];
    const top = await h.create(...delays.map((delayMs) => ({ priority: INT32_MAX, delayMs })));
    const bottom = await h.create(...delays.map((delayMs) => ({ priority: INT32_MIN, delayMs })));
    h.clock.advance(300);
    const claimed = await h.claim(20);
    const byDelay = (ts: Task[]) => [...ts].sort((a, b) => a.runAt - b.runAt).map((t) => t.id);
    expect(ids(claimed)).toEqual([...byDelay(top), ...byDelay(bottom)]);
  });

  it('equal priority and runAt: createdAt ascending, then seq ascending', async () => {
    const h = await ctx.open();
    h.clock.set(T0 + 100);
    const a = await h.createOne({ delayMs: 0 }); // runAt T0+100, createdAt T0+100, lowest seq
    h.clock.set(T0);
    const b = await h.createOne({ delayMs: 100 }); // runAt T0+100, createdAt T0
    const [c, d] = await h.create({ delayMs: 100 }, { delayMs: 100 }); // same createdAt as b, later seq
    const e = await h.createOne({ delayMs: 100 });
    expect([a.runAt, b.runAt, c.runAt, d.runAt, e.runAt]).toEqual(Array(5).fill(T0 + 100));
    expect(a.seq).toBeLessThan(b.seq);
    h.clock.set(T0 + 100);
    expect(await h.claimIds(10)).toEqual([b.id, c.id, d.id, e.id, a.id]);
  });

  it('int32 extremes with exact ties broken by runAt (1 ms apart), then seq', async () => {
    const h = await ctx.open();
    const specs = [];
    for (const priority of [INT32_MIN, INT32_MAX - 1, 0, INT32_MAX, INT32_MIN + 1]) {
      for (const delayMs of [1, 0, 1, 0]) specs.push({ priority, delayMs });
    }
    const tasks = await h.create(...specs);
    h.clock.advance(1);
    const claimed = await h.claim(100);
    expect(ids(claimed)).toEqual(sortedIds(tasks));
    // spelled out for the top: MAX@runAt T0 (2, in seq order), MAX@T0+1 (2), then MAX-1@T0 ...
    expect(claimed.slice(0, 6).map((t) => [t.priority, t.runAt - T0])).toEqual([
      [INT32_MAX, 0],
      [INT32_MAX, 0],
      [INT32_MAX, 1],
      [INT32_MAX, 1],
      [INT32_MAX - 1, 0],
      [INT32_MAX - 1, 0],
    ]);
    expect(claimed.slice(-3).map((t) => [t.priority, t.runAt - T0])).toEqual([
      [INT32_MIN, 0],
      [INT32_MIN, 1],
      [INT32_MIN, 1],
    ]);
  });

  it('exact over the whole due backlog: every batch is the head of the full order, with creations in between', async () => {
    const h = await ctx.open();
    const r = rng(7);
    const pick = () => [INT32_MIN, INT32_MAX, r(5) - 2, r(2000) - 1000][r(4) === 0 ? r(2) : 2 + r(2)];
    let pending: Task[] = await h.create(...Array.from({ length: 1500 }, () => ({ priority: pick(), delayMs: r(1000) })));
    h.clock.advance(1000);
    for (let round = 0; round < 12; round++) {
      const k = 1 + r(150);
      const now = h.clock.now();
      const due = pending.filter((t) => t.runAt <= now);
      const expected = sortedIds(due).slice(0, k);
      const got = await h.claimIds(k);
      expect(got).toEqual(expected);
      const taken = new Set(got);
      pending = pending.filter((t) => !taken.has(t.id));
      pending.push(...(await h.create(...Array.from({ length: 40 }, () => ({ priority: pick(), delayMs: r(3) * 200 })))));
      h.clock.advance(r(300));
    }
  });

  it('delayed tasks are never claimed early and are claimed once due; they do not block due tasks', async () => {
    const h = await ctx.open();
    const [delayed, due] = await h.create({ priority: 10, delayMs: 1000 }, { priority: 0 });
    const first = await h.claimRaw(5);
    expect(ids(first.claimed)).toEqual([due.id]);
    expect(first.timedOut).toEqual([]);
    if (first.nextWakeAt !== null) {
      expect(first.nextWakeAt).toBeGreaterThan(T0);
      expect(first.nextWakeAt).toBeLessThanOrEqual(T0 + 1000);
    }
    h.clock.advance(999);
    expect(await h.claim(5)).toEqual([]);
    h.clock.advance(1);
    expect(await h.claimIds(5)).toEqual([delayed.id]);
  });

  it('once due, a delayed task goes ahead of older lower-priority tasks', async () => {
    const h = await ctx.open();
    const [l1, l2, hi] = await h.create({ priority: 0 }, { priority: 0 }, { priority: 1, delayMs: 500 });
    expect(await h.claimIds(1)).toEqual([l1.id]);
    h.clock.advance(500);
    expect(await h.claimIds(1)).toEqual([hi.id]);
    expect(await h.claimIds(1)).toEqual([l2.id]);
  });
}
