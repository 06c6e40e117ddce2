import { fenceOf, StaleLeaseError, TaskStatus, type RemovalRule, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, T0, type Harness } from '../harness';

/**
 * removeOnComplete / removeOnFail as the store sees them (core/removal.ts): complete() with
 * `remove` deletes the task in the same step (`now`), or keeps the newest `count` / those
 * finished within `ageMs` of the same type and side, deleting older ones in that step. A deleted
 * task is gone as purge leaves it: get() null, not listed or counted, slots free, and its
 * idempotency key free (a re-submit creates a new task: README "Removing finished tasks").
 */
const NOW: RemovalRule = { now: true };
const keep = (count: number | null, ageMs: number | null): RemovalRule => ({ now: false, count, ageMs });

async function finish(h: Harness, t: Task, status: TaskStatus.SUCCEEDED | TaskStatus.FAILED, remove: RemovalRule | null): Promise<Task> {
  return h.store.complete(fenceOf(t), { status, result: status === TaskStatus.SUCCEEDED ? { n: t.seq } : null, error: status === TaskStatus.FAILED ? 'boom' : null, remove });
}

async function idsOf(h: Harness, status: TaskStatus, type?: string): Promise<string[]> {
  return ids((await h.listAll(status)).filter((t) => type === undefined || t.type === type));
}

export function removalCases(ctx: ContractContext): void {
  it('remove now: the task is deleted by the complete that finishes it; the reply is the finished task; slots and key free', async () => {
    const h = await ctx.open();
    await h.setLimitsAll([{ kind: 'concurrencyKey', key: 'k', limit: 1 }]);
    const held = await h.hold({ idempotencyKey: 'idem-1', concurrencyKey: 'k', tenantId: 't1' });
    const next = await h.createOne({ concurrencyKey: 'k' });
    expect(await h.claim(1)).toEqual([]); // the key's one slot is held
    const done = await finish(h, held, TaskStatus.SUCCEEDED, NOW);
    expect(done).toMatchObject({ id: held.id, status: TaskStatus.SUCCEEDED, result: { n: held.seq }, finishedAt: T0, version: held.version + 1, leaseId: null });
    expect(await h.store.get(held.id)).toBeNull();
    expect(await h.listAll(TaskStatus.SUCCEEDED)).toEqual([]);
    const stats = await h.store.stats();
    expect(stats.byStatus[TaskStatus.SUCCEEDED]).toBe(0);
    expect(stats.inFlightByTenant.t1 ?? 0).toBe(0);
    expect(await h.claimIds(1)).toEqual([next.id]); // the slot was freed in that step
    // the idempotency key went with the task: the same key creates a new task
    const again = await h.store.create([h.newTask({ idempotencyKey: 'idem-1', concurrencyKey: 'k', tenantId: 't1' })]);
    expect(again[0].created).toBe(true);
    expect(again[0].task.id).not.toBe(held.id);
    expect(await h.store.purge(T0 + 1_000_000, 100)).toBe(0); // nothing left to purge
  });

  it('remove now on a provider task (RUNNING, from claimPolls) and on failures; a stale fence deletes nothing', async () => {
    const h = await ctx.open();
    const a = await h.hold();
    const running = await h.store.markSubmitted(fenceOf(a), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    const [polled] = await h.store.claimPolls({ owner: 'w', limit: 5, leaseMs: 30_000 });
    expect(polled.id).toBe(running.id);
    const stale = { ...fenceOf(polled), version: polled.version - 1 };
    await expect(h.store.complete(stale, { status: TaskStatus.FAILED, error: 'x', remove: NOW })).rejects.toBeInstanceOf(StaleLeaseError);
    expect((await h.mustGet(a.id)).status).toBe(TaskStatus.RUNNING);
    const failed = await finish(h, polled, TaskStatus.FAILED, NOW);
    expect(failed).toMatchObject({ status: TaskStatus.FAILED, error: 'boom', nextPollAt: null });
    expect(await h.store.get(a.id)).toBeNull();
    h.clock.advance(10_000);
    expect(await h.store.claimPolls({ owner: 'w', limit: 5, leaseMs: 30_000 })).toEqual([]);
    expect(await h.store.recoverExpired(100)).toEqual([]);
    const b = await h.hold({}, 1000);
    expect((await h.store.complete(fenceOf(b), { status: TaskStatus.SUBMIT_UNKNOWN, error: 'lost', attempt: true, remove: NOW })).attempts).toBe(1);
    expect(await h.all()).toEqual([]);
  });

  it('count: keeps the newest n of the same type and side, deletes older ones as tasks finish; other types and the other side untouched', async () => {
    const h = await ctx.open();
    const r = rng(15);
    const types = ['a', 'b', 'c'];
    const tasks = await h.create(...Array.from({ length: 90 }, (_, i) => ({ type: types[i % 3] })));
    const finished: Array<{ id: string; type: string; ok: boolean }> = [];
    for (let left = tasks.length; left > 0; ) {
      const batch = await h.claim(Math.min(left, 1 + r(7)));
      left -= batch.length;
      for (const t of batch) {
        h.clock.advance(1 + r(3));
        const ok = r(4) !== 0;
        // type a: count 5 on both sides; b: count 3 on success, kept on failure; c: no rule
        const rule = t.type === 'a' ? keep(5, null) : t.type === 'b' && ok ? keep(3, null) : null;
        await finish(h, t, ok ? TaskStatus.SUCCEEDED : TaskStatus.FAILED, rule);
        finished.push({ id: t.id, type: t.type, ok });
      }
    }
    const newest = (type: string, ok: boolean, n: number) => finished.filter((f) => f.type === type && f.ok === ok).map((f) => f.id).slice(-n);
    const sorted = (xs: string[]) => [...xs].sort();
    expect(sorted(await idsOf(h, TaskStatus.SUCCEEDED, 'a'))).toEqual(sorted(newest('a', true, 5)));
    expect(sorted(await idsOf(h, TaskStatus.FAILED, 'a'))).toEqual(sorted(newest('a', false, 5)));
    expect(sorted(await idsOf(h, TaskStatus.SUCCEEDED, 'b'))).toEqual(sorted(newest('b', true, 3)));
    expect(sorted(await idsOf(h, TaskStatus.FAILED, 'b'))).toEqual(sorted(newest('b', false, 1000)));
    expect(sorted(await idsOf(h, TaskStatus.SUCCEEDED, 'c'))).toEqual(sorted(newest('c', true, 1000)));
    const gone = finished.find((f) => f.type === 'a' && f.ok && !newest('a', true, 5).includes(f.id))!;
    expect(await h.store.get(gone.id)).toBeNull();
  });

  it('age: a finish deletes the tasks of its type and side finished at or before now - ageMs; count and age together', async () => {
    const h = await ctx.open();
    const ts = await h.create(...Array.from({ length: 6 }, () => ({ type: 'aged' })));
    const claimed = await h.claim(6);
    expect(ids(claimed)).toEqual(ids(ts));
    const rule = keep(null, 1500);
    await finish(h, claimed[0], TaskStatus.SUCCEEDED, rule); // T0
    h.clock.advance(1000);
    await finish(h, claimed[1], TaskStatus.SUCCEEDED, rule); // T0+1000
    h.clock.advance(1000);
    await finish(h, claimed[2], TaskStatus.SUCCEEDED, rule); // T0+2000: T0 is past the age
    expect(sorted(await idsOf(h, TaskStatus.SUCCEEDED))).toEqual(sorted(ids(claimed.slice(1, 3))));
    h.clock.advance(500);
    await finish(h, claimed[3], TaskStatus.SUCCEEDED, rule); // T0+2500: T0+1000 is at the boundary (<=): deleted
    expect(sorted(await idsOf(h, TaskStatus.SUCCEEDED))).toEqual(sorted(ids(claimed.slice(2, 4))));
    h.clock.advance(10);
    const both = keep(1, 60_000);
    await finish(h, claimed[4], TaskStatus.SUCCEEDED, both); // count 1 wins over the long age
    expect(await idsOf(h, TaskStatus.SUCCEEDED)).toEqual([claimed[4].id]);
    await finish(h, claimed[5], TaskStatus.FAILED, keep(null, 1)); // the other side: nothing of it is old
    expect(await idsOf(h, TaskStatus.FAILED)).toEqual([claimed[5].id]);
  });

  it('a requeued task leaves the kept set: it is not deleted by later finishes while it is pending again', async () => {
    const h = await ctx.open();
    const [x, y, z] = await h.create({ type: 'q' }, { type: 'q' }, { type: 'q' });
    const [cx] = await h.claim(1);
    await finish(h, cx, TaskStatus.FAILED, keep(1, null));
    await h.store.requeue(x.id);
    const claimed = await h.claim(2);
    expect(ids(claimed)).toEqual([x.id, y.id]);
    const back = claimed[0];
    h.clock.advance(1); // tasks finished in the same ms are "newest" in any order
    await finish(h, claimed[1], TaskStatus.FAILED, keep(1, null));
    expect((await h.mustGet(x.id)).status).toBe(TaskStatus.SUBMITTING); // still held, not deleted
    h.clock.advance(1);
    await finish(h, back, TaskStatus.FAILED, keep(1, null));
    expect(await idsOf(h, TaskStatus.FAILED)).toEqual([x.id]);
    expect(await h.status(z.id)).toBe(TaskStatus.PENDING_SUBMIT);
  });
}

function sorted(xs: string[]): string[] {
  return [...xs].sort();
}
