import { fenceOf, TaskStatus } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import type { Harness } from '../harness';

/** Subscribes; `next()` resolves at the listener's next call (calls may be spurious: only "it is called" is checked). */
async function listen(h: Harness) {
  if (!h.store.subscribe) throw new Error('this store has no subscribe');
  let calls = 0;
  let waiting: (() => void) | null = null;
  const off = await h.store.subscribe(() => {
    calls++;
    waiting?.();
  });
  return {
    off,
    /** Resolves once the listener was called after this call. */
    next(): Promise<void> {
      const seen = calls;
      return new Promise<void>((resolve) => {
        waiting = () => calls > seen && resolve();
      });
    },
  };
}

/**
 * subscribe (port): the listener is called soon after work may have become claimable. Every
 * store of the suite has it; here through the same store object (this process); wake-ups from
 * other processes are in test/core/worker-idle.spec.ts.
 */
export function wakeCases(ctx: ContractContext): void {
  it('a create of a due task, a limit change and a cancel request wake a subscriber', async () => {
    const h = await ctx.open();
    const l = await listen(h);
    let woke = l.next();
    await h.createOne();
    await woke;

    woke = l.next();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    await woke;

    const t = await h.hold({ providerKey: 'q' }, 100_000); // p is paused now
    const submitted = await h.store.markSubmitted(fenceOf(t), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 60_000 });
    woke = l.next();
    await h.store.cancel(submitted.id); // claimPolls finalises it: the workers must look now
    await woke;
    await l.off();
  });

  it('a sweep that put a task back in the queue wakes a subscriber', async () => {
    const h = await ctx.open();
    await h.hold({}, 100);
    const l = await listen(h);
    h.clock.advance(100);
    const woke = l.next();
    expect((await h.store.recoverExpired(10)).map((t) => t.to)).toEqual([TaskStatus.PENDING_SUBMIT]);
    await woke;
    await l.off();
  });

  it('a retry (requeue) of a finished task wakes a subscriber', async () => {
    const h = await ctx.open();
    const t = await h.hold({}, 100_000);
    await h.store.complete(fenceOf(t), { status: TaskStatus.FAILED, error: 'no' });
    const l = await listen(h);
    const woke = l.next();
    expect((await h.store.requeue(t.id)).to).toBe(TaskStatus.PENDING_SUBMIT);
    await woke;
    await l.off();
  });
}
