import {
  AdmissionControl,
  FairTags,
  fenceOf,
  NotSupportedByStoreError,
  TaskStatus,
  ValidationError,
  type NewTask,
  type Task,
  type TaskPage,
} from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, sortedIds, type Harness } from '../harness';

const M = 1_000_000;

/** `n` tasks of one tenant (and the given fields), created in one call. */
function many(h: Harness, n: number, over: Partial<NewTask>): Promise<Task[]> {
  return h.create(...Array.from({ length: n }, () => over));
}

/**
 * DESIGN §7 fair share: tags F[t,p] = max(F[t,p], V[p]) + floor(1e6 / w), claims in order of
 * priority, tag, runAt, createdAt, seq; V[p] = max(V[p], tag) at a claim.
 */
export function fairnessCases(ctx: ContractContext): void {
  if (!ctx.policies.fairness) {
    it('not implemented by this store yet: fairness, tenant weights are refused with NotSupportedByStoreError', async () => {
      await expect(ctx.open({ fairness: 'tenant' })).rejects.toBeInstanceOf(NotSupportedByStoreError);
      await expect(ctx.open({ fairness: 'tenant' })).rejects.toThrow(/not supported by \w+ \(its policies say so\)/);
      const h = await ctx.open();
      expect(h.store.policies?.fairness ?? false).toBe(false);
      await expect(new AdmissionControl(h.store).setTenantWeight('t', 2)).rejects.toBeInstanceOf(NotSupportedByStoreError);
      expect((await h.store.getLimits()).tenantWeights).toEqual({});
    });
    return;
  }

  it('the store says it has fairness; aging with it, or a bad value, is a clear error', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    expect(h.store.fairness).toBe('tenant');
    expect(h.store.policies).toEqual(ctx.policies);
    expect((await ctx.open()).store.fairness ?? null).toBeNull();
    await expect(ctx.open({ fairness: 'tenant', agingIntervalMs: 1000 })).rejects.toThrow(ValidationError);
    await expect(ctx.open({ fairness: 'tenant', agingIntervalMs: 1000 })).rejects.toThrow(/agingIntervalMs = 1000 together with fairness: 'tenant'/);
    await expect(ctx.open({ fairness: 'tenants' as never })).rejects.toThrow(/fairness/);
  });

  it('tags are F = max(F, V) + 1e6 / w, shown on the task as a decimal string; none without fairness', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const [a1, a2, b1, n1] = await h.create({ tenantId: 'a' }, { tenantId: 'a' }, { tenantId: 'b' }, {});
    expect([a1, a2, b1, n1].map((t) => t.fairTag)).toEqual([String(M), String(2 * M), String(M), String(M)]);
    expect(await h.store.get(a2.id)).toEqual(a2);
    const off = await ctx.open();
    expect((await off.createOne({ tenantId: 'a' })).fairTag).toBeNull();
  });

  it('weights 1:1: two backlogs at one priority alternate, each in creation order', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const a = await many(h, 10, { tenantId: 'a' });
    const b = await many(h, 10, { tenantId: 'b' });
    const want = a.flatMap((t, i) => [t.id, b[i].id]);
    expect(await h.claimIds(7)).toEqual(want.slice(0, 7));
    expect(await h.claimIds(20)).toEqual(want.slice(7));
  });

  it('weights 3:1: the heavier tenant gets three claims for each of the other', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    await new AdmissionControl(h.store).setTenantWeight('a', 3);
    const a = await many(h, 12, { tenantId: 'a' });
    const b = await many(h, 4, { tenantId: 'b' });
    expect(a.map((t) => t.fairTag)).toEqual(a.map((_, i) => String((i + 1) * 333_333)));
    // tags a: 333333 k, b: 1e6 k: a1 a2 a3 b1 a4 a5 a6 b2 ...
    const want = b.flatMap((t, i) => [a[3 * i].id, a[3 * i + 1].id, a[3 * i + 2].id, t.id]);
    const got: string[] = [];
    for (let i = 0; i < 4; i++) got.push(...(await h.claimIds(4)));
    expect(got).toEqual(want);
  });

  it('a tenant arriving late starts at the level virtual time: no credit for idle time, no penalty for past use', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const a = await many(h, 10, { tenantId: 'a' });
    expect(await h.claimIds(4)).toEqual(ids(a.slice(0, 4))); // V[0] = 4e6
    h.clock.advance(50);
    const b = await many(h, 3, { tenantId: 'b' });
    expect(b.map((t) => t.fairTag)).toEqual([String(5 * M), String(6 * M), String(7 * M)]);
    // equal tags: the older task first (runAt)
    expect(await h.claimIds(20)).toEqual([a[4].id, b[0].id, a[5].id, b[1].id, a[6].id, b[2].id, ...ids(a.slice(7))]);
    // a tenant that used the queue a lot is not behind a newcomer either: it starts at V too
    const [c] = await h.create({ tenantId: 'c' });
    const [a11] = await h.create({ tenantId: 'a' });
    expect([c.fairTag, a11.fairTag]).toEqual([String(11 * M), String(11 * M)]);
  });

  it('quota-blocked tenants keep their place: refused tasks keep their tags and go first once there is room', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    await h.store.setLimits({ kind: 'tenant', tenantId: 'a', quota: 1 });
    const a = await many(h, 5, { tenantId: 'a' });
    const b = await many(h, 5, { tenantId: 'b' });
    const c = await many(h, 5, { tenantId: 'c' });
    const first = await h.claim(5);
    expect(ids(first)).toEqual([a[0].id, b[0].id, c[0].id, b[1].id, c[1].id]); // a[1] refused: quota
    await h.complete(first[0]);
    expect(await h.claimIds(3)).toEqual([a[1].id, b[2].id, c[2].id]); // a[1] (tag 2e6) before the 3e6 tags
    expect((await h.mustGet(a[2].id)).fairTag).toBe(String(3 * M));
  });

  it('priority levels are independent: each has its own virtual time and finish tags', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const a1 = await many(h, 3, { tenantId: 'a', priority: 1 });
    const a0 = await many(h, 3, { tenantId: 'a', priority: 0 });
    const b0 = await many(h, 3, { tenantId: 'b', priority: 0 });
    expect([...a1, ...a0].map((t) => t.fairTag)).toEqual([M, 2 * M, 3 * M, M, 2 * M, 3 * M].map(String));
    expect(await h.claimIds(9)).toEqual([...ids(a1), a0[0].id, b0[0].id, a0[1].id, b0[1].id, a0[2].id, b0[2].id]);
    // V[1] = 3e6, V[0] = 3e6: a new level starts at 0
    expect((await h.createOne({ tenantId: 'b', priority: 7 })).fairTag).toBe(String(M));
    expect((await h.createOne({ tenantId: 'b', priority: 1 })).fairTag).toBe(String(4 * M));
  });

  it('changePriority to another level re-tags the task as a create there would; to its own level it changes nothing', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const a = await many(h, 5, { tenantId: 'a' });
    const b = await many(h, 5, { tenantId: 'b' });
    const up = await h.store.changePriority(a[2].id, 1);
    expect(up.fairTag).toBe(String(M)); // F[a,1] = max(0, V[1] = 0) + 1e6
    const back = await h.store.changePriority(a[2].id, 0);
    expect(back.fairTag).toBe(String(6 * M)); // F[a,0] = 5e6 + 1e6: behind the rest of a's backlog
    const same = await h.store.changePriority(b[0].id, 0);
    expect(same).toMatchObject({ fairTag: String(M), version: b[0].version + 1 });
    expect(await h.claimIds(10)).toEqual([a[0].id, b[0].id, a[1].id, b[1].id, b[2].id, a[3].id, b[3].id, a[4].id, b[4].id, a[2].id]);
  });

  it('tasks without a tenant form one tenant of their own, whatever their other keys', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const n = await h.create({ providerKey: 'p' }, { providerKey: 'q', accountId: 'x' }, { providerKey: 'p', concurrencyKey: 'k1' }, { providerKey: 'q' });
    expect(n.map((t) => t.fairTag)).toEqual([M, 2 * M, 3 * M, 4 * M].map(String));
    const a = await many(h, 4, { tenantId: 'a' });
    expect(await h.claimIds(8)).toEqual(n.flatMap((t, i) => [t.id, a[i].id]));
  });

  it('a weight applies to tasks created after it is set; getLimits lists the weights; null goes back to 1', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const control = new AdmissionControl(h.store);
    const before = await many(h, 2, { tenantId: 'a' });
    const snap = await control.setTenantWeight('a', 4);
    expect(snap.tenantWeights).toEqual({ a: 4 });
    expect((await h.store.getLimits()).tenantWeights).toEqual({ a: 4 });
    const after = await many(h, 2, { tenantId: 'a' });
    expect([...before, ...after].map((t) => t.fairTag)).toEqual(['1000000', '2000000', '2250000', '2500000']);
    expect((await h.mustGet(before[1].id)).fairTag).toBe('2000000'); // tasks created before keep theirs
    await control.setTenantWeight('b', 1000);
    expect((await h.createOne({ tenantId: 'b' })).fairTag).toBe('1000');
    expect((await control.setTenantWeight('a', null)).tenantWeights).toEqual({ b: 1000 });
    expect((await h.createOne({ tenantId: 'a' })).fairTag).toBe('3500000');
  });

  it('setTenantWeight refuses bad values (nothing changes) and a queue without fairness says why a weight would do nothing', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const control = new AdmissionControl(h.store);
    for (const bad of [0, 1001, 1.5, -1, Number.NaN, '2'] as unknown[]) {
      await expect(control.setTenantWeight('a', bad as number)).rejects.toThrow(/weight: got .*expected an integer from 1 to 1000/);
    }
    await expect(control.setTenantWeight('', 2)).rejects.toThrow(ValidationError);
    expect((await h.store.getLimits()).tenantWeights).toEqual({});
    const off = await ctx.open();
    await expect(new AdmissionControl(off.store).setTenantWeight('a', 2)).rejects.toThrow(/does not use fair share/);
    await expect(off.store.setLimits({ kind: 'tenantWeight', tenantId: 'a', weight: 2 })).rejects.toThrow(ValidationError);
    expect((await off.store.getLimits()).tenantWeights).toEqual({});
  });

  it('a retried or released task keeps its tag: it goes first at its level again', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const a = await many(h, 3, { tenantId: 'a' });
    const b = await many(h, 3, { tenantId: 'b' });
    const [x, y] = await h.claim(2);
    expect(ids([x, y])).toEqual([a[0].id, b[0].id]);
    const back = await h.store.retry(fenceOf(x), { delayMs: 0, error: 'again' });
    expect(back.fairTag).toBe(String(M));
    await h.store.release(fenceOf(y));
    expect(await h.claimIds(10)).toEqual([a[0].id, b[0].id, a[1].id, b[1].id, a[2].id, b[2].id]);
  });

  it('stats: the oldest wait of a level is its oldest due task, even when its tag is not the smallest', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const [late] = await h.create({ tenantId: 'a', delayMs: 1000 }); // tag 1e6, due at T0 + 1000
    await h.create({ tenantId: 'a' }); // tag 2e6, due at T0
    h.clock.advance(1000);
    expect((await h.store.stats()).pending).toEqual([{ priority: 0, count: 2, oldestWaitMs: 1000 }]);
    expect(await h.claimIds(1)).toEqual([late.id]);
    expect((await h.store.stats()).pending).toEqual([{ priority: 0, count: 1, oldestWaitMs: 1000 }]);
  });

  it('a create that fails (an id already taken) moves no finish tag: all or none', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const [a1] = await h.create({ tenantId: 'a' });
    await expect(h.store.create([h.newTask({ tenantId: 'a' }), h.newTask({ tenantId: 'b' }), h.newTask({ id: a1.id, tenantId: 'a' })])).rejects.toThrow();
    await expect(h.store.create([h.newTask({ id: a1.id, tenantId: 'a' })])).rejects.toThrow();
    const [a2, b1] = await h.create({ tenantId: 'a' }, { tenantId: 'b' });
    expect([a1, a2, b1].map((t) => t.fairTag)).toEqual([M, 2 * M, M].map(String));
  });

  it('query lists pending tasks in the fair claim order across pages; explain counts the tasks ahead in that order', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const a = await many(h, 7, { tenantId: 'a', providerKey: 'pa' });
    h.clock.advance(5);
    const b = await many(h, 7, { tenantId: 'b', providerKey: 'pb' });
    const [late] = await h.create({ tenantId: 'c', delayMs: 1000 });
    const want = [...a.flatMap((t, i) => [t.id, b[i].id]), late.id];
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const page: TaskPage = await h.store.query({ status: TaskStatus.PENDING_SUBMIT, limit: 3, cursor });
      listed.push(...ids(page.tasks));
      cursor = page.nextCursor;
    } while (cursor !== null && listed.length <= want.length); // a cursor that loses its place ends here
    expect(listed).toEqual(want);
    // b[2] (tag 3e6) comes after a[0..2] and b[0..1]: five ahead, although twelve tasks are older
    expect(await h.store.explain(b[2].id)).toMatchObject({ verdict: 'waiting', ahead: 5 });
    expect(await h.store.explain(a[0].id)).toMatchObject({ verdict: 'next' });
    expect(await h.claimIds(14)).toEqual(want.slice(0, 14));
  });

  it('at scale: 60 tenants with weights over three levels and 20 providers, creates between claims: claims follow the tags exactly', async () => {
    const h = await ctx.open({ fairness: 'tenant' });
    const r = rng(16);
    const control = new AdmissionControl(h.store);
    const tenants = Array.from({ length: 60 }, (_, i) => `t${i}`);
    const weights = new Map<string, number>();
    for (const t of tenants.slice(0, 20)) {
      const w = [2, 3, 7, 1000][r(4)];
      weights.set(t, w);
      await control.setTenantWeight(t, w);
    }
    const model = new FairTags();
    let pending: Task[] = [];
    let claimedCount = 0;
    for (let round = 0; round < 12; round++) {
      const specs = Array.from({ length: 20 + r(60) }, () => {
        const tenantId = r(8) === 0 ? null : tenants[r(tenants.length)];
        return { tenantId, priority: r(3), providerKey: `p${r(20)}`, delayMs: r(5) === 0 ? r(300) : 0 };
      });
      const made = await h.create(...specs);
      for (const t of made) expect(t.fairTag).toBe(String(model.tag(t.tenantId, t.priority, (t.tenantId && weights.get(t.tenantId)) || 1)));
      pending.push(...made);
      h.clock.advance(r(200));
      const now = h.clock.now();
      const k = 1 + r(40);
      const want = sortedIds(pending.filter((t) => t.runAt <= now)).slice(0, k);
      const got = await h.claim(k);
      expect(ids(got)).toEqual(want);
      for (const t of got) model.claimed(t.tenantId, t.priority, BigInt(t.fairTag!));
      const taken = new Set(want);
      pending = pending.filter((t) => !taken.has(t.id));
      claimedCount += got.length;
    }
    expect(claimedCount).toBeGreaterThan(150);
    expect(new Set(pending.map((t) => t.tenantId)).size).toBeGreaterThan(30);
    expect((await h.store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(pending.length);
  });
}
