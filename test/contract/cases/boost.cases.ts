import { fenceOf, NotSupportedByStoreError, PriorityQueue, TaskStatus, TaskTypeRegistry, type NewTask, type SubmissionClaim } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, T0 } from '../harness';

const M = 1_000_000;

/** A task whose boost to `priority` fires `inMs` after its creation (deadline an hour away). */
function boosted(inMs: number, priority: number, over: Partial<NewTask> = {}): Partial<NewTask> {
  const timeoutMs = 3_600_000;
  return { timeoutMs, boost: { beforeDeadlineMs: timeoutMs - inMs, priority }, ...over };
}

function boostsOf(claim: SubmissionClaim): Array<[string, number, number]> {
  return (claim.boosted ?? []).map((b) => [b.task.id, b.fromPriority, b.task.priority]);
}

/**
 * DESIGN §7 deadline boost (core/boost.ts): at boostAt = deadlineAt - W a claim first moves every
 * task still pending below P up to P, in boostAt then seq order, and reports them.
 */
export function boostCases(ctx: ContractContext): void {
  if (!ctx.policies.boost) {
    it('not implemented by this store yet: a task with a boost is refused with NotSupportedByStoreError, nothing written', async () => {
      const h = await ctx.open();
      expect(h.store.policies?.boost ?? false).toBe(false);
      await expect(h.store.create([h.newTask(boosted(1000, 5))])).rejects.toBeInstanceOf(NotSupportedByStoreError);
      await expect(h.store.create([h.newTask(), h.newTask(boosted(1000, 5))])).rejects.toThrow(/A deadline boost is not supported by \w+ \(its policies say so\)/);
      await h.expectEmpty();
    });
    return;
  }

  it('a task keeps its boost as boostAt = deadlineAt - W and boostPriority; get shows them', async () => {
    const h = await ctx.open();
    const [t, plain] = await h.create({ timeoutMs: 10_000, boost: { beforeDeadlineMs: 4000, priority: 9 }, delayMs: 50 }, {});
    expect(t).toMatchObject({ deadlineAt: T0 + 10_000, boostAt: T0 + 6000, boostPriority: 9, priority: 0, version: 1 });
    expect(await h.store.get(t.id)).toEqual(t);
    expect(plain).toMatchObject({ boostAt: null, boostPriority: null });
  });

  it('fires exactly at its time, not 1 ms before: version + 1, reported by the claim, ahead of the higher priority it passed', async () => {
    const h = await ctx.open();
    const [y1, y2, x] = await h.create({ priority: 3 }, { priority: 3 }, boosted(6000, 5));
    h.clock.advance(5999);
    const before = await h.claimRaw(1);
    expect(ids(before.claimed)).toEqual([y1.id]);
    expect(boostsOf(before)).toEqual([]);
    expect(await h.mustGet(x.id)).toMatchObject({ priority: 0, version: 1 });
    h.clock.advance(1);
    const at = await h.claimRaw(1);
    expect(boostsOf(at)).toEqual([[x.id, 0, 5]]);
    expect(at.boosted![0].task).toMatchObject({ status: TaskStatus.PENDING_SUBMIT, priority: 5, version: 2, updatedAt: T0 + 6000 });
    expect(ids(at.claimed)).toEqual([x.id]);
    expect(at.claimed[0]).toMatchObject({ priority: 5, version: 3 });
    expect(boostsOf(await h.claimRaw(5))).toEqual([]); // fired once
    expect(await h.status(y2.id)).toBe(TaskStatus.SUBMITTING);
  });

  it('several boosts due at once fire in boostAt then seq order', async () => {
    const h = await ctx.open();
    const [x1, x2, x3, x4] = await h.create(boosted(3000, 4), boosted(2000, 7), boosted(2000, 4), boosted(2500, 1));
    h.clock.advance(5000);
    const claim = await h.claimRaw(0);
    expect(boostsOf(claim)).toEqual([
      [x2.id, 0, 7],
      [x3.id, 0, 4],
      [x4.id, 0, 1],
      [x1.id, 0, 4],
    ]);
    expect(claim.claimed).toEqual([]);
    expect(await h.claimIds(4)).toEqual([x2.id, x1.id, x3.id, x4.id]); // priority, then createdAt / seq
  });

  // (a store with boosts but without fairness has nothing to re-tag: fairness.cases.ts checks its refusal)
  if (ctx.policies.fairness) {
    it('with fairness the boost re-tags the task at its new level; boosts falling due together are tagged in their order', async () => {
      const h = await ctx.open({ fairness: 'tenant' });
      const [b1, b2] = await h.create({ tenantId: 'b', priority: 5 }, { tenantId: 'b', priority: 5 });
      const [x1, x2, x3] = await h.create(boosted(3000, 5, { tenantId: 'a' }), boosted(2000, 5, { tenantId: 'a' }), boosted(2000, 5, { tenantId: 'a' }));
      expect([x1, x2, x3, b1, b2].map((t) => t.fairTag)).toEqual([M, 2 * M, 3 * M, M, 2 * M].map(String));
      h.clock.advance(3000);
      const claim = await h.claimRaw(1);
      // fired x2, x3 (boostAt T0 + 2000), then x1: tags at level 5 are 1e6, 2e6, 3e6 in that order
      expect(claim.boosted!.map((b) => [b.task.id, b.task.fairTag])).toEqual([
        [x2.id, String(M)],
        [x3.id, String(2 * M)],
        [x1.id, String(3 * M)],
      ]);
      expect(ids(claim.claimed)).toEqual([b1.id]); // tag 1e6 like x2, and created before it
      expect(await h.claimIds(10)).toEqual([x2.id, b2.id, x3.id, x1.id]);
    });
  }

  it('a task that is not pending when its boost fires keeps its priority, also when it comes back later', async () => {
    const h = await ctx.open();
    const [x, c, hi] = await h.create(boosted(1000, 5), boosted(1000, 5), { priority: 2 });
    const [held] = await h.claim(1);
    expect(held.id).toBe(hi.id);
    const [xs] = await h.claim(1);
    expect(xs.id).toBe(x.id);
    await h.store.cancel(c.id);
    h.clock.advance(1000);
    const at = await h.claimRaw(5);
    expect(boostsOf(at)).toEqual([]);
    expect(await h.mustGet(c.id)).toMatchObject({ status: TaskStatus.CANCELED, priority: 0 });
    const back = await h.store.retry(fenceOf(xs), { delayMs: 0, error: 'again' });
    expect(back.priority).toBe(0);
    const after = await h.claimRaw(5);
    expect(boostsOf(after)).toEqual([]);
    expect(ids(after.claimed)).toEqual([x.id]);
    expect(after.claimed[0].priority).toBe(0);
  });

  it('a task finished before boostAt and retried keeps its boost: it fires once the time comes', async () => {
    const h = await ctx.open();
    const [x, y] = await h.create(boosted(1000, 5), boosted(1000, 5));
    await h.store.cancel(x.id);
    const [ys] = await h.claim(1);
    expect(ys.id).toBe(y.id);
    await h.store.complete(fenceOf(ys), { status: TaskStatus.FAILED, error: 'no' });
    const back = await Promise.all([h.store.requeue(x.id), h.store.requeue(y.id)]);
    expect(back.map((t) => [t.task.status, t.task.priority])).toEqual([
      [TaskStatus.PENDING_SUBMIT, 0],
      [TaskStatus.PENDING_SUBMIT, 0],
    ]);
    h.clock.advance(1000);
    const at = await h.claimRaw(0);
    expect(boostsOf(at)).toEqual([
      [x.id, 0, 5],
      [y.id, 0, 5],
    ]);
  });

  it('a task claimed before boostAt and requeued (retry with backoff, release, expired lease) keeps its unfired boost: it fires at its time', async () => {
    const h = await ctx.open();
    const [r, l, e] = await h.create(boosted(1000, 5), boosted(1000, 5), boosted(1000, 5));
    const [rs, ls] = await h.claim(2);
    expect([rs.id, ls.id]).toEqual([r.id, l.id]);
    const [es] = await h.claim(1, { leaseMs: 100 });
    expect(es.id).toBe(e.id);
    const retried = await h.store.retry(fenceOf(rs), { delayMs: 300, error: 'vendor 503' });
    const released = await h.store.release(fenceOf(ls));
    h.clock.advance(100);
    await h.store.recoverExpired(10);
    const recovered = await h.mustGet(e.id);
    for (const t of [retried, released, recovered]) expect(t).toMatchObject({ status: TaskStatus.PENDING_SUBMIT, priority: 0, boostAt: T0 + 1000, boostPriority: 5 });
    const [hi] = await h.create({ priority: 3 });
    h.clock.advance(899);
    expect(boostsOf(await h.claimRaw(0))).toEqual([]); // not before its time
    h.clock.advance(1);
    const at = await h.claimRaw(4);
    expect(boostsOf(at)).toEqual([
      [r.id, 0, 5],
      [l.id, 0, 5],
      [e.id, 0, 5],
    ]);
    // at 5, ahead of the priority 3 they were behind (among themselves: runAt, then seq)
    expect(ids(at.claimed).slice(0, 3).sort()).toEqual([r.id, l.id, e.id].sort());
    expect(ids(at.claimed)[3]).toBe(hi.id);
  });

  it('a task already at or above the boost priority is left as it is', async () => {
    const h = await ctx.open();
    const [x, y] = await h.create(boosted(100, 5, { priority: 5 }), boosted(100, 5, { priority: 9 }));
    h.clock.advance(100);
    const claim = await h.claimRaw(0);
    expect(boostsOf(claim)).toEqual([]);
    expect(await h.mustGet(x.id)).toMatchObject({ priority: 5, version: 1 });
    expect(await h.mustGet(y.id)).toMatchObject({ priority: 9, version: 1 });
  });

  it('changePriority: before boostAt the boost still fires if the new priority is lower; at or after it, the explicit priority wins', async () => {
    const h = await ctx.open();
    const [early, late] = await h.create(boosted(1000, 5), boosted(1000, 5));
    await h.store.changePriority(early.id, -3);
    h.clock.advance(1000);
    expect((await h.store.changePriority(late.id, 1)).priority).toBe(1);
    const claim = await h.claimRaw(0);
    expect(boostsOf(claim)).toEqual([[early.id, -3, 5]]);
    expect((await h.mustGet(late.id)).priority).toBe(1);
  });

  it('a delayed task is boosted while it waits and is claimed at its new priority once due', async () => {
    const h = await ctx.open();
    const [x, y] = await h.create(boosted(1000, 5, { delayMs: 5000 }), { priority: 2, delayMs: 5000 });
    h.clock.advance(1000);
    const claim = await h.claimRaw(5);
    expect(boostsOf(claim)).toEqual([[x.id, 0, 5]]);
    expect(claim.claimed).toEqual([]);
    h.clock.advance(4000);
    expect(await h.claimIds(5)).toEqual([x.id, y.id]);
  });

  it('through PriorityQueue: a boost at or before creation (W >= timeout) creates the task at that priority, without a boost', async () => {
    const h = await ctx.open();
    const registry = new TaskTypeRegistry();
    registry.register('job', { providerKey: 'p', timeoutMs: 60_000, boost: { beforeDeadlineMs: 10_000, priority: 4 } });
    const queue = new PriorityQueue({ store: h.store, registry });
    const typed = await queue.submit({ type: 'job' });
    expect(typed).toMatchObject({ priority: 0, boostAt: T0 + 50_000, boostPriority: 4 });
    const urgent = await queue.submit({ type: 'job', timeoutMs: 5000 });
    expect(urgent).toMatchObject({ priority: 4, boostAt: null, boostPriority: null });
    const own = await queue.submit({ type: 'job', boost: { beforeDeadlineMs: 59_000, priority: 8 } });
    expect(own).toMatchObject({ boostAt: T0 + 1000, boostPriority: 8 });
    expect((await queue.submit({ type: 'job', boost: null })).boostAt).toBeNull();
  });

  it('at scale: 2,500 boosts due at once (more than one store call fires) are all applied before the claim picks', async () => {
    const h = await ctx.open();
    const [plain] = await h.create({ priority: 3 });
    const made = await h.create(...Array.from({ length: 2500 }, (_, i) => boosted(1 + (i % 700), 4, { providerKey: `p${i % 50}` })));
    h.clock.advance(700);
    const claim = await h.claimRaw(3);
    expect(claim.boosted).toHaveLength(2500);
    const order = [...made].sort((a, b) => a.boostAt! - b.boostAt! || a.seq - b.seq);
    expect(claim.boosted!.map((b) => b.task.id)).toEqual(ids(order));
    expect(ids(claim.claimed)).toEqual(ids(made.slice(0, 3))); // all at 4 now, ahead of the plain 3
    expect(await h.status(plain.id)).toBe(TaskStatus.PENDING_SUBMIT);
  });

  it('at scale: 300 boosted tasks over 40 lanes fire in order, claims take the boosted ones first', async () => {
    const h = await ctx.open();
    const r = rng(61);
    const made = await h.create(
      ...Array.from({ length: 300 }, (_, i) => boosted(1 + r(5000), r(3) === 0 ? -1 : 1 + r(4), { priority: r(2), providerKey: `p${i % 40}`, tenantId: `t${r(10)}` })),
    );
    h.clock.advance(2500);
    const claim = await h.claimRaw(0);
    const due = made.filter((t) => t.boostAt! <= T0 + 2500).sort((a, b) => a.boostAt! - b.boostAt! || a.seq - b.seq);
    expect(boostsOf(claim)).toEqual(due.filter((t) => t.priority < t.boostPriority!).map((t) => [t.id, t.priority, t.boostPriority]));
    expect(claim.boosted!.length).toBeGreaterThan(50);
    const got = await h.claim(300);
    const prio = new Map(made.map((t) => [t.id, t.boostAt! <= T0 + 2500 ? Math.max(t.priority, t.boostPriority!) : t.priority]));
    const seqOf = new Map(made.map((t) => [t.id, t.seq]));
    expect(ids(got)).toEqual(ids(made).sort((a, b) => prio.get(b)! - prio.get(a)! || seqOf.get(a)! - seqOf.get(b)!));
  });
}
