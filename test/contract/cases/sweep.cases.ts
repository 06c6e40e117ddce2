import { fenceOf, TaskStatus, type SweepRequest, type TaskStore, type Transition } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids } from '../harness';

/** The store's sweepExpired (every store of the suite has one). */
function sweep(store: TaskStore, owner: string, leaseMs = 1000, limit = 100): Promise<Transition[] | null> {
  if (!store.sweepExpired) throw new Error('this store has no sweepExpired');
  const r: SweepRequest = { owner, leaseMs, limit };
  return store.sweepExpired(r);
}

/**
 * sweepExpired (port): recoverExpired under the queue's sweep lease. Owners stand for the
 * workers of different processes; the lease is a time of the store clock.
 */
export function sweepCases(ctx: ContractContext): void {
  it('nothing due: [] and no lease taken, whoever asks next sweeps as well', async () => {
    const h = await ctx.open();
    await h.hold({}, 5000); // a live lease: nothing to recover
    expect(await sweep(h.store, 'a')).toEqual([]);
    expect(await sweep(h.store, 'b')).toEqual([]);
    expect(await sweep(h.store, 'a')).toEqual([]);
  });

  it('a sweep that recovers takes the lease: every sweep until it lapses does nothing (null), then the next recovers what expired meanwhile', async () => {
    const h = await ctx.open();
    const first = [await h.hold({ priority: 3 }, 100), await h.hold({ priority: 2 }, 100)];
    h.clock.advance(100);
    const done = await sweep(h.store, 'a', 1000);
    expect(done!.map((t) => [t.task.id, t.from, t.to])).toEqual(
      expect.arrayContaining(first.map((t) => [t.id, TaskStatus.SUBMITTING, TaskStatus.PENDING_SUBMIT])),
    );
    expect(done).toHaveLength(2);
    // the recovered tasks are claimed again; one of them is lost again at once
    const again = await h.claim(2, { leaseMs: 10 });
    expect(ids(again).sort()).toEqual(ids(first).sort());
    h.clock.advance(10);
    expect(await sweep(h.store, 'b', 1000)).toBeNull();
    expect(await sweep(h.store, 'a', 1000)).toBeNull(); // no privilege for the one who took it
    expect((await h.listAll(TaskStatus.SUBMITTING)).map((t) => t.id).sort()).toEqual(ids(first).sort()); // untouched
    h.clock.advance(1000 - 10 - 1);
    expect(await sweep(h.store, 'c', 1000)).toBeNull(); // 1 ms before the lease lapses
    h.clock.advance(1);
    const later = await sweep(h.store, 'c', 1000);
    expect(later!.map((t) => t.task.id).sort()).toEqual(ids(first).sort());
    expect(later!.map((t) => t.to)).toEqual([TaskStatus.PENDING_SUBMIT, TaskStatus.PENDING_SUBMIT]);
    expect(await sweep(h.store, 'a', 1000)).toBeNull(); // c holds it now
  });

  it('recovers as recoverExpired does: lost submits, passed deadlines (with their slots), lost poll leases; limit applies', async () => {
    const h = await ctx.open();
    await h.setLimitsAll([{ kind: 'concurrencyKey', key: 'k', limit: 1 }]);
    const keyed = await h.hold({ concurrencyKey: 'k', idempotent: false }, 100);
    const polled = await h.hold({}, 100_000);
    const submitted = await h.store.markSubmitted(fenceOf(polled), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
    const [leased] = await h.store.claimPolls({ owner: 'p', limit: 1, leaseMs: 100 });
    expect(leased.id).toBe(submitted.id);
    const late = await h.createOne({ timeoutMs: 50 });
    const blocked = await h.createOne({ concurrencyKey: 'k' });
    h.clock.advance(100);
    const done = await sweep(h.store, 'a', 1000, 1000);
    expect(done!.map((t) => [t.task.id, t.to]).sort()).toEqual(
      [
        [keyed.id, TaskStatus.SUBMIT_UNKNOWN],
        [late.id, TaskStatus.TIMED_OUT],
      ].sort(),
    );
    expect(await h.mustGet(submitted.id)).toMatchObject({ status: TaskStatus.SUBMITTED, leaseId: null }); // poll lease cleared
    expect(ids(await h.claim(5))).toEqual([blocked.id]); // the key's slot was freed
    expect((await h.store.claimPolls({ owner: 'p2', limit: 5, leaseMs: 100 })).map((t) => t.id)).toEqual([submitted.id]);
  });

  it('a sweep that only cleared poll leases takes the lease too', async () => {
    const h = await ctx.open();
    const t = await h.hold({}, 100_000);
    await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    await h.store.claimPolls({ owner: 'p', limit: 1, leaseMs: 50 });
    h.clock.advance(50);
    expect(await sweep(h.store, 'a', 1000)).toEqual([]);
    expect(await h.mustGet(t.id)).toMatchObject({ status: TaskStatus.RUNNING, leaseId: null });
    const other = await h.hold({}, 10);
    h.clock.advance(10);
    expect(await sweep(h.store, 'b', 1000)).toBeNull();
    expect(await h.status(other.id)).toBe(TaskStatus.SUBMITTING);
  });

  it('at scale: 300 lost tasks, sweeps of 7 owners racing in steps of 40, each task recovered once, one owner per lease period', async () => {
    const h = await ctx.open();
    const n = 300;
    await h.create(...Array.from({ length: n }, (_, i) => ({ priority: i % 11, accountId: `acc${i % 13}` })));
    const held = await h.claim(n, { leaseMs: 100 });
    expect(held).toHaveLength(n);
    h.clock.advance(100);
    const recovered: string[] = [];
    const holders: string[] = [];
    for (let period = 0; recovered.length < n && period < 20; period++) {
      const answers = await Promise.all(Array.from({ length: 7 }, (_, w) => sweep(h.store, `w${w}`, 500, 40)));
      const ran = answers.flatMap((a, w) => (a === null ? [] : [[w, a] as const]));
      const working = ran.filter(([, a]) => a.length > 0);
      expect(working.length).toBeLessThanOrEqual(1); // one sweep per period, however many ask
      for (const [w, a] of working) {
        holders.push(`w${w}`);
        recovered.push(...a.map((t) => t.task.id));
      }
      h.clock.advance(500);
    }
    expect(recovered.sort()).toEqual(ids(held).sort());
    expect(new Set(recovered).size).toBe(n);
    expect(holders.length).toBe(Math.ceil(n / 40));
  });
}
