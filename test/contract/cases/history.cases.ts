import { DEFAULT_HISTORY_LIMIT, fenceOf, TaskNotFoundError, TaskStatus, type TaskHistoryEntry } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { T0 } from '../harness';

const P = TaskStatus.PENDING_SUBMIT;
const S = TaskStatus.SUBMITTING;

export function historyCases(ctx: ContractContext): void {
  it('records every transition in order: time, from, to, version, and the error of an ended attempt', async () => {
    const h = await ctx.open({ historyLimit: DEFAULT_HISTORY_LIMIT });
    const [t] = await h.create({ maxAttempts: 5 });
    expect(await h.store.history(t.id)).toEqual([{ at: T0, from: null, to: P, version: 1 }]);
    h.clock.advance(10);
    const [c1] = await h.claim(1);
    h.clock.advance(10);
    const r1 = await h.store.retry(fenceOf(c1), { delayMs: 0, error: 'boom' });
    h.clock.advance(10);
    const [c2] = await h.claim(1);
    const sub = await h.store.markSubmitted(fenceOf(c2), { externalId: 'e', status: TaskStatus.SUBMITTED, pollDelayMs: 5 });
    h.clock.advance(10);
    const [p1] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
    const run = await h.store.recordPoll(fenceOf(p1), { status: TaskStatus.RUNNING, nextPollDelayMs: 5, pollErrors: 0 });
    h.clock.advance(10);
    const [p2] = await h.store.claimPolls({ owner: 'w', limit: 1, leaseMs: 1000 });
    const done = await h.store.complete(fenceOf(p2), { status: TaskStatus.FAILED, error: 'x'.repeat(2000) });
    const got = await h.store.history(t.id);
    const expected: TaskHistoryEntry[] = [
      { at: T0, from: null, to: P, version: 1 },
      { at: T0 + 10, from: P, to: S, version: c1.version },
      { at: T0 + 20, from: S, to: P, version: r1.version, error: 'boom' },
      { at: T0 + 30, from: P, to: S, version: c2.version },
      { at: T0 + 30, from: S, to: TaskStatus.SUBMITTED, version: sub.version },
      { at: T0 + 40, from: TaskStatus.SUBMITTED, to: TaskStatus.RUNNING, version: run.version },
      { at: T0 + 50, from: TaskStatus.RUNNING, to: TaskStatus.FAILED, version: done.version, error: 'x'.repeat(500) },
    ];
    expect(got).toEqual(expected);
    // the retry of the finished task is one more transition
    h.clock.advance(10);
    const again = await h.store.requeue(t.id);
    expect((await h.store.history(t.id)).slice(-1)).toEqual([{ at: T0 + 60, from: TaskStatus.FAILED, to: P, version: again.task.version }]);
  });

  it('records the transitions of cancel, claim timeouts, lease recovery and release', async () => {
    const h = await ctx.open({ historyLimit: DEFAULT_HISTORY_LIMIT });
    const [canceled, late, lost, unsafe, released] = await h.create(
      { priority: 1 },
      { priority: 2, timeoutMs: 5 },
      { priority: 5 },
      { priority: 4, idempotent: false },
      { priority: 3 },
    );
    await h.store.cancel(canceled.id);
    const [cl, cu, cr] = await h.claim(3, { leaseMs: 100 });
    expect([cl.id, cu.id, cr.id]).toEqual([lost.id, unsafe.id, released.id]);
    await h.store.release(fenceOf(cr));
    h.clock.advance(100);
    const claim = await h.claimRaw(5);
    expect(claim.timedOut.map((t) => t.id)).toEqual([late.id]);
    expect(claim.claimed.map((t) => t.id)).toEqual([released.id]);
    await h.store.recoverExpired(10);
    const steps = async (id: string) => (await h.store.history(id)).map((e) => [e.from, e.to, e.at - T0]);
    expect(await steps(canceled.id)).toEqual([[null, P, 0], [P, TaskStatus.CANCELED, 0]]);
    expect(await steps(late.id)).toEqual([[null, P, 0], [P, TaskStatus.TIMED_OUT, 100]]);
    expect(await steps(lost.id)).toEqual([[null, P, 0], [P, S, 0], [S, P, 100]]);
    expect(await steps(unsafe.id)).toEqual([[null, P, 0], [P, S, 0], [S, TaskStatus.SUBMIT_UNKNOWN, 100]]);
    expect(await steps(released.id)).toEqual([[null, P, 0], [P, S, 0], [S, P, 0], [P, S, 100]]);
  });

  it('without the option a store keeps its default (historyLimit says which): that many transitions, or none', async () => {
    const h = await ctx.open();
    const n = h.store.historyLimit;
    expect(n).toBeGreaterThanOrEqual(0);
    const [t] = await h.create({ maxAttempts: 1000 });
    for (let i = 0; i < 12; i++) {
      const [c] = await h.claim(1);
      await h.store.retry(fenceOf(c), { delayMs: 0, error: 'e' });
    }
    expect(await h.store.history(t.id)).toHaveLength(Math.min(n, 25));
  });

  it('keeps the last historyLimit transitions; the creation drops out first', async () => {
    for (const limit of [DEFAULT_HISTORY_LIMIT, 3]) {
      const h = await ctx.open({ historyLimit: limit });
      const n = limit;
      const [t] = await h.create({ maxAttempts: 1000 });
      const versions: number[] = [];
      for (let i = 0; i < n; i++) {
        h.clock.advance(1);
        const [c] = await h.claim(1);
        versions.push(c.version);
        const r = await h.store.retry(fenceOf(c), { delayMs: 0, error: `e${i}` });
        versions.push(r.version);
      }
      const got = await h.store.history(t.id);
      expect(got).toHaveLength(n);
      expect(got.map((e) => e.version)).toEqual(versions.slice(-n));
      expect(got[0].from).not.toBeNull();
      expect(got[got.length - 1]).toMatchObject({ from: S, to: P, error: `e${n - 1}` });
    }
  });

  it('exactly historyLimit - 1 stored transitions keep the creation; historyLimit 0 keeps none', async () => {
    const h = await ctx.open({ historyLimit: 3 });
    const [t] = await h.create({});
    const [c] = await h.claim(1);
    await h.complete(c, TaskStatus.FAILED);
    expect((await h.store.history(t.id)).map((e) => e.to)).toEqual([P, S, TaskStatus.FAILED]);
    await h.store.requeue(t.id);
    expect((await h.store.history(t.id)).map((e) => e.to)).toEqual([S, TaskStatus.FAILED, P]);
    const off = await ctx.open({ historyLimit: 0 });
    const [u] = await off.create({});
    const [cu] = await off.claim(1);
    await off.complete(cu);
    expect(await off.store.history(u.id)).toEqual([]);
  });

  it('purge removes the history with the task; a later task with the same id starts empty', async () => {
    const h = await ctx.open({ historyLimit: DEFAULT_HISTORY_LIMIT });
    const [t] = await h.create({});
    const [c] = await h.claim(1);
    await h.complete(c, TaskStatus.FAILED);
    expect(await h.store.history(t.id)).toHaveLength(3);
    expect(await h.store.purge(h.clock.now(), 10)).toBe(1);
    await expect(h.store.history(t.id)).rejects.toBeInstanceOf(TaskNotFoundError);
    h.clock.advance(7);
    const again = await h.store.create([h.newTask({ id: t.id })]);
    expect(again[0].created).toBe(true);
    expect(await h.store.history(t.id)).toEqual([{ at: T0 + 7, from: null, to: P, version: 1 }]);
  });

  it('a batch claim and a batch of completes record one entry per task', async () => {
    const h = await ctx.open({ historyLimit: DEFAULT_HISTORY_LIMIT });
    const tasks = await h.create(...Array.from({ length: 60 }, (_, i) => ({ priority: i % 7, providerKey: `p${i % 5}` })));
    h.clock.advance(3);
    const claimed = await h.claim(60);
    h.clock.advance(3);
    await Promise.all(claimed.map((c, i) => h.store.complete(fenceOf(c), { status: i % 2 ? TaskStatus.SUCCEEDED : TaskStatus.FAILED, error: i % 2 ? null : `err ${i}` })));
    for (const t of tasks) {
      const got = await h.store.history(t.id);
      const j = claimed.findIndex((c) => c.id === t.id);
      expect(got).toEqual([
        { at: T0, from: null, to: P, version: 1 },
        { at: T0 + 3, from: P, to: S, version: 2 },
        j % 2
          ? { at: T0 + 6, from: S, to: TaskStatus.SUCCEEDED, version: 3 }
          : { at: T0 + 6, from: S, to: TaskStatus.FAILED, version: 3, error: `err ${j}` },
      ]);
    }
  });
}
