import { fenceOf, TaskStatus, type WakeReason } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import type { Harness } from '../harness';

/** Subscribes; `next()` resolves at the listener's next call (calls may be spurious: only "it is called" is checked). */
async function listen(h: Harness) {
  if (!h.store.subscribe) throw new Error('this store has no subscribe');
  let calls = 0;
  const reasons: Array<WakeReason | undefined> = [];
  let waiting: (() => void) | null = null;
  const off = await h.store.subscribe((what) => {
    calls++;
    reasons.push(what);
    waiting?.();
  });
  return {
    off,
    /** The reason of every call so far, in order. */
    reasons,
    /** Resolves once the listener was called after this call. */
    next(): Promise<void> {
      const seen = calls;
      return new Promise<void>((resolve) => {
        waiting = () => calls > seen && resolve();
      });
    },
    /**
     * Resolves at the first call after this one that gives no reason ("anything may have
     * changed"); rejects after `ms` with what came meanwhile, so a store that names a narrower
     * reason than the change fails here instead of at jest's timeout.
     */
    nextWithoutReason(what: string, ms = 10_000): Promise<void> {
      const from = reasons.length;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${what}: no wake-up without a reason within ${ms} ms; reasons seen: ${JSON.stringify(reasons.slice(from))}`)), ms);
        waiting = () => {
          if (reasons.slice(from).some((r) => r === undefined)) {
            clearTimeout(timer);
            resolve();
          }
        };
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

  // WakeReason: a store may say that a wake-up came from creates only ('submissions'): the Worker
  // then skips its poll claim. Naming it for anything else would leave a cancel request, a limit
  // change, a recovered task or a retry unseen until the next safety poll.
  it("names 'submissions' only for creates: a limit change, a cancel request, a sweep and a retry wake without a reason", async () => {
    const h = await ctx.open();
    const l = await listen(h);
    let woke = l.next();
    await h.create({ providerKey: 'p' }, { providerKey: 'p' }); // paused below: the holds take q's tasks
    await woke;

    woke = l.nextWithoutReason('setLimits');
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    await woke;

    const polled = await h.hold({ providerKey: 'q' }, 100_000);
    const submitted = await h.store.markSubmitted(fenceOf(polled), { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 60_000 });
    woke = l.nextWithoutReason('cancel of a polled task');
    await h.store.cancel(submitted.id);
    await woke;

    const failed = await h.hold({ providerKey: 'q' }, 100_000);
    await h.store.complete(fenceOf(failed), { status: TaskStatus.FAILED, error: 'no' });
    woke = l.nextWithoutReason('requeue');
    expect((await h.store.requeue(failed.id)).to).toBe(TaskStatus.PENDING_SUBMIT);
    await woke;

    expect((await h.claim(1, { leaseMs: 100 })).map((t) => t.id)).toEqual([failed.id]); // the retried task, its lease left to lapse
    h.clock.advance(100);
    woke = l.nextWithoutReason('recoverExpired');
    expect((await h.store.recoverExpired(10)).map((t) => t.to)).toContain(TaskStatus.PENDING_SUBMIT);
    await woke;
    await l.off();

    // and nothing but the one reason the port defines
    expect(l.reasons.filter((r) => r !== undefined && r !== 'submissions')).toEqual([]);
  });
}
