import { fenceOf, TaskStatus, type Task, type TerminalStatus } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, T0 } from '../harness';

/**
 * DESIGN §4: `attempts` counts every failed submit attempt, the last one too (complete() with
 * `attempt`, retry, recovery of an expired submit lease); every terminal transition clears
 * nextPollAt.
 */
export function attemptsCases(ctx: ContractContext): void {
  it('complete with attempt: attempts + 1 in the same write (FAILED, SUBMIT_UNKNOWN, TIMED_OUT); without it attempts are unchanged', async () => {
    const h = await ctx.open();
    const tasks = await h.create({ maxAttempts: 3 }, { maxAttempts: 3 }, { maxAttempts: 3 }, { maxAttempts: 3 }, { maxAttempts: 3 });
    const claimed = await h.claim(5);
    expect(ids(claimed)).toEqual(ids(tasks));
    h.clock.advance(10);
    const outcomes: Array<[TerminalStatus, boolean]> = [
      [TaskStatus.FAILED, true],
      [TaskStatus.SUBMIT_UNKNOWN, true],
      [TaskStatus.TIMED_OUT, true],
      [TaskStatus.SUCCEEDED, false],
      [TaskStatus.FAILED, false],
    ];
    for (const [i, c] of claimed.entries()) {
      const [status, attempt] = outcomes[i];
      const done = await h.store.complete(fenceOf(c), { status, error: status === TaskStatus.SUCCEEDED ? null : 'x', attempt });
      expect(done).toMatchObject({ status, attempts: attempt ? 1 : 0, finishedAt: T0 + 10, leaseId: null, nextPollAt: null });
      expect(await h.store.get(c.id)).toEqual(done);
    }
  });

  it('a task that fails every attempt: retry, retry, then the last failure completes FAILED with attempts = maxAttempts', async () => {
    const h = await ctx.open();
    const t = await h.createOne({ maxAttempts: 3 });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [c] = await h.claim(1);
      expect(c).toMatchObject({ id: t.id, attempts: attempt - 1 });
      const r = await h.store.retry(fenceOf(c), { delayMs: 0, error: `boom ${attempt}` });
      expect(r).toMatchObject({ status: TaskStatus.PENDING_SUBMIT, attempts: attempt });
    }
    const [last] = await h.claim(1);
    const failed = await h.store.complete(fenceOf(last), { status: TaskStatus.FAILED, error: 'boom 3', attempt: true });
    expect(failed).toMatchObject({ status: TaskStatus.FAILED, attempts: 3, error: 'boom 3' });
    expect(await h.store.get(t.id)).toEqual(failed);
  });

  it('retry of a cancel-requested task: CANCELED, and its failed attempt is counted', async () => {
    const h = await ctx.open();
    const t = await h.hold();
    const req = (await h.store.cancel(t.id))!;
    const r = await h.store.retry(fenceOf(req), { delayMs: 0, error: 'HTTP 500' });
    expect(r).toMatchObject({ status: TaskStatus.CANCELED, attempts: 1, leaseId: null, nextPollAt: null });
    expect(await h.store.get(t.id)).toEqual(r);
  });

  it('recoverExpired: an expired submit lease is a failed attempt whatever comes next (PENDING_SUBMIT, FAILED, SUBMIT_UNKNOWN, CANCELED)', async () => {
    const h = await ctx.open();
    const [again, last, unsafe, canceled] = await h.create(
      { maxAttempts: 3, priority: 4 },
      { maxAttempts: 1, priority: 3 },
      { idempotent: false, priority: 2 },
      { priority: 1 },
    );
    await h.claim(4, { leaseMs: 1000 });
    await h.store.cancel(canceled.id);
    h.clock.advance(1000);
    const tr = await h.store.recoverExpired(10);
    const got = Object.fromEntries(tr.map((x) => [x.task.id, [x.to, x.task.attempts]]));
    expect(got).toEqual({
      [again.id]: [TaskStatus.PENDING_SUBMIT, 1],
      [last.id]: [TaskStatus.FAILED, 1],
      [unsafe.id]: [TaskStatus.SUBMIT_UNKNOWN, 1],
      [canceled.id]: [TaskStatus.CANCELED, 1],
    });
    for (const x of tr) expect(await h.store.get(x.task.id)).toEqual(x.task);
  });

  it('every terminal transition of a polled task clears nextPollAt: complete (each status), cancel, and the deadline sweep', async () => {
    const h = await ctx.open();
    const statuses: TerminalStatus[] = [TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.TIMED_OUT, TaskStatus.CANCELED];
    const tasks = await h.create(...statuses.map(() => ({})), { timeoutMs: 5000 }, {});
    const claimed = await h.claim(tasks.length);
    for (const c of claimed) await h.store.markSubmitted(fenceOf(c), { externalId: `x-${c.id}`, status: TaskStatus.RUNNING, pollDelayMs: 100 });
    const [late, canceled] = tasks.slice(-2);
    await h.store.cancel(canceled.id);
    h.clock.advance(100);
    const polls = await h.store.claimPolls({ owner: 'w', limit: 10, leaseMs: 1000 });
    expect(ids(polls).sort()).toEqual(ids(tasks).sort());
    const byId = new Map(polls.map((p) => [p.id, p]));
    for (const [i, status] of statuses.entries()) {
      const done = await h.store.complete(fenceOf(byId.get(tasks[i].id)!), { status, error: 'x' });
      expect(done).toMatchObject({ status, nextPollAt: null, externalId: `x-${tasks[i].id}` });
      expect(await h.store.get(done.id)).toEqual(done);
    }
    const c = await h.store.complete(fenceOf(byId.get(canceled.id)!), { status: TaskStatus.CANCELED, error: 'canceled' });
    expect(c).toMatchObject({ status: TaskStatus.CANCELED, nextPollAt: null });
    // the last one goes back to waiting for its poll, and its deadline passes between polls
    await h.store.recordPoll(fenceOf(byId.get(late.id)!), { status: TaskStatus.RUNNING, nextPollDelayMs: 60_000, pollErrors: 0 });
    h.clock.advance(5000);
    const tr = await h.store.recoverExpired(10);
    expect(tr.map((x) => [x.task.id, x.from, x.to])).toEqual([[late.id, TaskStatus.RUNNING, TaskStatus.TIMED_OUT]]);
    expect(tr[0].task).toMatchObject({ nextPollAt: null, leaseId: null, externalId: `x-${late.id}` });
    expect(await h.store.get(late.id)).toEqual(tr[0].task);
  });

  it('one batch of 300 completes issued together (submits and polls, re-fenced after a cancel, with and without attempt): each written alone and returned as stored', async () => {
    const h = await ctx.open();
    const r = rng(11);
    const n = 300;
    const created = await h.create(...Array.from({ length: n }, (_, i) => ({ priority: i % 7, accountId: `a${i % 13}`, tenantId: `t${i % 5}` })));
    const claimed = await h.claim(n);
    expect(claimed).toHaveLength(n);
    // a third go on to be polled; a few of every kind get a cancel request (their version moves)
    const holds = new Map<string, Task>();
    for (const c of claimed) {
      if (r(3) === 0) {
        await h.store.markSubmitted(fenceOf(c), { externalId: `e-${c.id}`, status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
      } else holds.set(c.id, c);
    }
    for (const p of await h.store.claimPolls({ owner: 'poller', limit: n, leaseMs: 30_000 })) holds.set(p.id, p);
    expect(holds.size).toBe(n);
    for (const id of [...holds.keys()].filter(() => r(10) === 0)) holds.set(id, (await h.store.cancel(id))!);
    h.clock.advance(25);
    const plan = created.map((t) => {
      const hold = holds.get(t.id)!;
      const submitting = hold.status === TaskStatus.SUBMITTING;
      const kinds: TerminalStatus[] = [TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.SUBMIT_UNKNOWN, TaskStatus.TIMED_OUT];
      const status = kinds[r(4)];
      const attempt = submitting && status !== TaskStatus.SUCCEEDED && r(2) === 0;
      return { hold, status, attempt, result: status === TaskStatus.SUCCEEDED ? { n: t.id } : undefined };
    });
    const done = await Promise.all(
      plan.map((p) => h.store.complete(fenceOf(p.hold), { status: p.status, result: p.result, error: p.result ? null : 'x', attempt: p.attempt })),
    );
    for (const [i, d] of done.entries()) {
      const p = plan[i];
      expect(d).toMatchObject({
        id: p.hold.id,
        status: p.status,
        attempts: p.hold.attempts + (p.attempt ? 1 : 0),
        result: p.result ?? null,
        finishedAt: T0 + 25,
        nextPollAt: null,
        leaseId: null,
        cancelRequested: p.hold.cancelRequested,
      });
      expect(await h.store.get(d.id)).toEqual(d);
    }
    // every slot came back: all accounts and tenants are free
    const stats = await h.store.stats();
    expect(stats.inFlightByAccount).toEqual([]);
    expect(stats.inFlightByTenant).toEqual({});
  });
}
