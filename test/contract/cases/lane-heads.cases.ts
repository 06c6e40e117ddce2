import { INT32_MAX, TaskStatus, type NewTask, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, shuffle, sortedIds, T0, type Harness } from '../harness';

/**
 * DESIGN §2 across lanes, where a store keeps one head per lane: a lane's best task can leave
 * (cancel) or move (changePriority) without the lane being touched, so a stored head may be
 * stale, and the claim must still take the first candidate of the WHOLE order. And the order's
 * tie-breaks (createdAt, then seq) must hold between lanes too, not only inside one.
 */

/** Lanes A (priorities 10 and 0), B (5), C (20); the first claim takes C's 20 (every lane's head is then stored). */
async function threeLanes(h: Harness): Promise<{ a10: Task; a0: Task; b5: Task }> {
  const [a10, a0, b5, c20] = await h.create(
    { providerKey: 'A', priority: 10 },
    { providerKey: 'A', priority: 0 },
    { providerKey: 'B', priority: 5 },
    { providerKey: 'C', priority: 20 },
  );
  expect(await h.claimIds(1)).toEqual([c20.id]);
  return { a10, a0, b5 };
}

export function laneHeadCases(ctx: ContractContext): void {
  describe('stale lane heads', () => {
    for (const batch of [false, true]) {
      const claims = async (h: Harness, n: number): Promise<string[]> => {
        if (batch) return h.claimIds(n);
        const out: string[] = [];
        for (let i = 0; i < n; i++) out.push(...(await h.claimIds(1)));
        return out;
      };
      const how = batch ? 'in one batch' : 'one claim at a time';

      it(`a lane's head cancelled: the next claims follow the whole order (${how})`, async () => {
        const h = await ctx.open();
        const { a10, a0, b5 } = await threeLanes(h);
        expect((await h.store.cancel(a10.id))?.status).toBe(TaskStatus.CANCELED);
        expect(await claims(h, 2)).toEqual([b5.id, a0.id]);
        expect(await h.claim(5)).toEqual([]);
      });

      it(`a lane's head lowered by changePriority below another lane's head (${how})`, async () => {
        const h = await ctx.open();
        const { a10, a0, b5 } = await threeLanes(h);
        await h.store.changePriority(a10.id, -1);
        expect(await claims(h, 3)).toEqual([b5.id, a0.id, a10.id]);
      });

      it(`a task created above the stored head of its lane, which was below another lane's (${how})`, async () => {
        const h = await ctx.open();
        const { a10, a0, b5 } = await threeLanes(h);
        // one create: a task at the end of lane A, and one that is B's new head and the first of all
        const [aLow, b20] = await h.create({ providerKey: 'A', priority: -5 }, { providerKey: 'B', priority: 20 });
        expect(await claims(h, 5)).toEqual([b20.id, a10.id, b5.id, a0.id, aLow.id]);
      });

      it(`a task raised above every head, in a lane whose head is stale (${how})`, async () => {
        const h = await ctx.open();
        const { a10, a0, b5 } = await threeLanes(h);
        await h.store.cancel(a10.id);
        await h.store.changePriority(a0.id, 7); // A's only task, above B's head
        expect(await claims(h, 1)).toEqual([a0.id]);
        const [b1] = await h.create({ providerKey: 'B', priority: 1 });
        await h.store.changePriority(b1.id, INT32_MAX); // B's second task, now above its head
        expect(await claims(h, 2)).toEqual([b1.id, b5.id]);
      });
    }

    it('hundreds of lanes whose heads are cancelled, lowered and raised between claims of 1 to 7: every claim is the head of the whole order', async () => {
      const h = await ctx.open();
      const r = rng(31);
      const specs: Partial<NewTask>[] = [];
      for (let lane = 0; lane < 200; lane++) {
        for (let k = 0; k < 3; k++) specs.push({ accountId: `l${lane}`, priority: r(1000), payload: { lane, k } });
      }
      const live = new Map<string, Task>();
      for (const t of (await h.store.create(shuffle(specs.map((s) => h.newTask(s)), r))).map((x) => x.task)) live.set(t.id, t);
      const take = async (n: number) => {
        const want = sortedIds([...live.values()]).slice(0, n);
        const got = await h.claimIds(n);
        expect(got).toEqual(want);
        for (const id of got) live.delete(id);
      };
      await take(1); // every lane's head stored
      while (live.size > 0) {
        // change the heads of a few lanes (the best tasks: what a stale head hides)
        const best = sortedIds([...live.values()]).slice(0, 12);
        for (const id of best) {
          const roll = r(4);
          if (roll === 0) {
            await h.store.cancel(id);
            live.delete(id);
          } else if (roll === 1) {
            const t = await h.store.changePriority(id, live.get(id)!.priority - 1 - r(600));
            live.set(id, t);
          }
        }
        // and raise a random task now and then
        if (r(3) === 0) {
          const all = [...live.values()];
          const t = all[r(all.length)];
          live.set(t.id, await h.store.changePriority(t.id, t.priority + r(400)));
        }
        await take(1 + r(7));
      }
      expect(await h.claim(10)).toEqual([]);
    });
  });

  describe('more ready lanes than a claim reads at once', () => {
    it('tasks created into new and existing lanes, ahead of, among and behind 300 stored heads, are claimed in the whole order', async () => {
      const h = await ctx.open();
      const r = rng(47);
      const live = new Map<string, Task>();
      const add = async (specs: Partial<NewTask>[]) => {
        for (const t of (await h.store.create(shuffle(specs.map((s) => h.newTask(s)), r))).map((x) => x.task)) live.set(t.id, t);
      };
      const take = async (n: number) => {
        const want = sortedIds([...live.values()]).slice(0, n);
        expect(await h.claimIds(n)).toEqual(want);
        for (const id of want) live.delete(id);
      };
      await add(Array.from({ length: 300 }, (_, lane) => ({ accountId: `l${lane}`, priority: 100 + r(800) })));
      await take(1); // every lane's head stored, all of them ready
      let fresh = 0;
      while (live.size > 0) {
        // a batch into lanes the store has never seen and into existing ones, at any place of the order
        const specs: Partial<NewTask>[] = [];
        for (let k = r(4); k >= 0; k--) specs.push({ accountId: `new${fresh++}`, priority: r(1100) });
        for (let k = r(3); k >= 0; k--) specs.push({ accountId: `l${r(300)}`, priority: r(1100) });
        if (fresh < 200) await add(specs);
        await take(1 + r(7));
      }
      expect(await h.claim(10)).toEqual([]);
    });
  });

  describe('createdAt tie-break between lanes', () => {
    /**
     * Equal priority and runAt, seq order unlike createdAt order (the clock goes back between
     * creates, as the clocks of two producer processes may disagree): the order is createdAt,
     * then seq. The tasks sit in different lanes, one pair in the same lane.
     */
    async function tied(h: Harness): Promise<string[]> {
      h.clock.set(T0 + 100);
      const a = await h.createOne({ providerKey: 'pa' }); // createdAt T0+100, first seq
      h.clock.set(T0);
      const b = await h.createOne({ providerKey: 'pb', delayMs: 100 }); // createdAt T0
      h.clock.set(T0 + 50);
      const c = await h.createOne({ providerKey: 'pc', delayMs: 50 }); // createdAt T0+50
      h.clock.set(T0);
      const [d, e] = await h.create({ providerKey: 'pa', delayMs: 100 }, { providerKey: 'pd', delayMs: 100 }); // createdAt T0, after b
      const all = [a, b, c, d, e];
      expect(all.map((t) => t.runAt)).toEqual(Array(5).fill(T0 + 100));
      expect(ids([...all].sort((x, y) => x.seq - y.seq))).toEqual(ids(all));
      h.clock.set(T0 + 100);
      return [b.id, d.id, e.id, c.id, a.id];
    }

    for (const agingIntervalMs of [undefined, 1000]) {
      const mode = agingIntervalMs ? 'with aging' : 'without aging';

      it(`in one batch, ${mode}`, async () => {
        const h = await ctx.open({ agingIntervalMs });
        const want = await tied(h);
        expect(await h.claimIds(10)).toEqual(want);
      });

      it(`one claim at a time, ${mode}`, async () => {
        const h = await ctx.open({ agingIntervalMs });
        const want = await tied(h);
        const got: string[] = [];
        for (let i = 0; i < want.length; i++) got.push(...(await h.claimIds(1)));
        expect(got).toEqual(want);
      });
    }
  });
}
