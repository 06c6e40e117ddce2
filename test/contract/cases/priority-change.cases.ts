import { fenceOf, INT32_MAX, INT32_MIN, InvalidStateError, TaskNotFoundError, TaskStatus } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';

export function priorityChangeCases(ctx: ContractContext): void {
  it('a pending task is re-ordered immediately (version + 1), up to the int32 extremes', async () => {
    const h = await ctx.open();
    const [a, b, c, d] = await h.create({}, {}, {}, {});
    h.clock.advance(4);
    const cc = await h.store.changePriority(c.id, INT32_MAX);
    expect(cc).toMatchObject({ id: c.id, priority: INT32_MAX, status: TaskStatus.PENDING_SUBMIT, version: c.version + 1 });
    expect(await h.store.get(c.id)).toEqual(cc);
    await h.store.changePriority(a.id, INT32_MIN);
    await h.store.changePriority(d.id, 1);
    expect(await h.claimIds(1)).toEqual([c.id]);
    await h.store.changePriority(b.id, 2);
    expect(await h.claimIds(10)).toEqual([b.id, d.id, a.id]);
  });

  it('a delayed pending task can change priority; it takes its place when due', async () => {
    const h = await ctx.open();
    const [a, b] = await h.create({ priority: 5 }, { priority: 0, delayMs: 100 });
    await h.store.changePriority(b.id, 10);
    expect(await h.claimIds(10)).toEqual([a.id]);
    h.clock.advance(100);
    expect(await h.claimIds(10)).toEqual([b.id]);
  });

  it('InvalidStateError for SUBMITTING / SUBMITTED / terminal tasks (nothing changes); TaskNotFoundError for an unknown id', async () => {
    const h = await ctx.open();
    const [s1, s2, s3] = await h.create({}, {}, {});
    const [c1, c2, c3] = await h.claim(3);
    expect([c1.id, c2.id, c3.id]).toEqual([s1.id, s2.id, s3.id]);
    await h.store.markSubmitted(fenceOf(c2), { externalId: 'x', status: TaskStatus.RUNNING, pollDelayMs: 0 });
    await h.complete(c3);
    for (const id of [s1.id, s2.id, s3.id]) {
      const before = await h.mustGet(id);
      await expect(h.store.changePriority(id, 9)).rejects.toBeInstanceOf(InvalidStateError);
      expect(await h.store.get(id)).toEqual(before);
    }
    await expect(h.store.changePriority('00000000-0000-4000-8000-000000000003', 1)).rejects.toBeInstanceOf(TaskNotFoundError);
  });
}
