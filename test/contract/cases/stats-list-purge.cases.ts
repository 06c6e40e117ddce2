import { ALL_STATUSES, fenceOf, TaskStatus, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, nonZero, T0 } from '../harness';

export function statsListPurgeCases(ctx: ContractContext): void {
  it('stats: counts per status, pending per priority (count incl. delayed, oldest wait of due), in-flight per provider / account / tenant / key', async () => {
    const h = await ctx.open();
    await h.create({ priority: 5 }, { priority: 5, delayMs: 10_000 }, { priority: 0 }, { priority: 7, delayMs: 10_000 });
    const xs = await h.create(
      { priority: 100, providerKey: 'px', accountId: 'a1', tenantId: 't1', concurrencyKey: 'k1' },
      { priority: 100, providerKey: 'px', accountId: 'a1', tenantId: 't2' },
      { priority: 100, providerKey: 'py', accountId: 'a1', tenantId: 't1', concurrencyKey: 'k2' },
      { priority: 100, providerKey: 'px' },
      { priority: 100, providerKey: 'px', accountId: 'a2' },
    );
    const canceled = await h.createOne({ priority: -5 });
    h.clock.advance(300);
    await h.createOne({ priority: 0 }); // due now, waited 0
    const claimed = await h.claim(5);
    expect(ids(claimed)).toEqual(ids(xs));
    await h.store.markSubmitted(fenceOf(claimed[1]), { externalId: 'e1', status: TaskStatus.SUBMITTED, pollDelayMs: 100 });
    await h.store.markSubmitted(fenceOf(claimed[2]), { externalId: 'e2', status: TaskStatus.RUNNING, pollDelayMs: 100 });
    await h.complete(claimed[4]);
    await h.store.cancel(canceled.id);

    const s = await h.store.stats();
    expect(s.now).toBe(T0 + 300);
    const byStatus = Object.fromEntries(ALL_STATUSES.map((st) => [st, 0]));
    Object.assign(byStatus, { PENDING_SUBMIT: 5, SUBMITTING: 2, SUBMITTED: 1, RUNNING: 1, SUCCEEDED: 1, CANCELED: 1 });
    expect(s.byStatus).toEqual(byStatus);
    expect(s.pending).toEqual([
      { priority: 7, count: 1, oldestWaitMs: 0 },
      { priority: 5, count: 2, oldestWaitMs: 300 },
      { priority: 0, count: 2, oldestWaitMs: 300 },
    ]);
    expect(nonZero(s.inFlightByProvider)).toEqual({ px: 3, py: 1 });
    const byAccount = s.inFlightByAccount.filter((x) => x.count).sort((a, b) => (a.providerKey + a.accountId).localeCompare(b.providerKey + b.accountId));
    expect(byAccount).toEqual([
      { providerKey: 'px', accountId: 'a1', count: 2 },
      { providerKey: 'py', accountId: 'a1', count: 1 },
    ]);
    expect(nonZero(s.inFlightByTenant)).toEqual({ t1: 2, t2: 1 });
    expect(nonZero(s.inFlightByConcurrencyKey)).toEqual({ k1: 1, k2: 1 });
  });

  it('stats of an empty store', async () => {
    const h = await ctx.open();
    const s = await h.store.stats();
    expect(s.now).toBe(T0);
    for (const st of ALL_STATUSES) expect(s.byStatus[st]).toBe(0);
    expect(s.pending).toEqual([]);
    expect(nonZero(s.inFlightByProvider)).toEqual({});
  });

  it('list: one status, oldest seq first, paged by afterSeq (exclusive)', async () => {
    const h = await ctx.open();
    const tasks = await h.create(...Array.from({ length: 25 }, (_, i) => ({ priority: i % 3 })));
    const claimed = await h.claim(4);
    const claimedIds = new Set(ids(claimed));
    const pending = tasks.filter((t) => !claimedIds.has(t.id));
    const pages: Task[][] = [];
    let after: number | undefined;
    for (;;) {
      const page = await h.store.list({ status: TaskStatus.PENDING_SUBMIT, limit: 10, afterSeq: after });
      pages.push(page);
      if (page.length < 10) break;
      after = page[page.length - 1].seq;
    }
    expect(pages.map((p) => p.length)).toEqual([10, 10, 1]);
    expect(ids(pages.flat())).toEqual(ids(pending));
    expect(pages.flat()).toEqual(await Promise.all(pending.map((t) => h.mustGet(t.id))));
    const sub = await h.store.list({ status: TaskStatus.SUBMITTING, limit: 100 });
    expect(ids(sub)).toEqual(ids([...claimed].sort((a, b) => a.seq - b.seq)));
    expect(await h.store.list({ status: TaskStatus.SUBMITTING, limit: 100, afterSeq: sub[sub.length - 1].seq })).toEqual([]);
    expect(await h.store.list({ status: TaskStatus.FAILED, limit: 100 })).toEqual([]);
  });

  it('purge: deletes up to `limit` terminal tasks with finishedAt <= olderThan, never live ones; frees their idempotency keys', async () => {
    const h = await ctx.open();
    const [a, b, c, d, live, pend] = await h.create({ idempotencyKey: 'key-a' }, {}, {}, { priority: -1 }, { priority: -2 }, { priority: -3, delayMs: 10_000 });
    const claimed = await h.claim(5);
    h.clock.set(T0 + 100);
    await h.complete(claimed[0]);
    h.clock.set(T0 + 200);
    await h.complete(claimed[1], TaskStatus.FAILED);
    h.clock.set(T0 + 300);
    await h.complete(claimed[2], TaskStatus.CANCELED);
    await h.store.retry(fenceOf(claimed[3]), { delayMs: 50_000, error: 'x' });
    expect(ids(claimed)).toEqual([a.id, b.id, c.id, d.id, live.id]);

    expect(await h.store.purge(T0 + 99, 10)).toBe(0);
    expect(await h.store.purge(T0 + 200, 10)).toBe(2);
    expect(await h.store.get(a.id)).toBeNull();
    expect(await h.store.get(b.id)).toBeNull();
    expect(await h.status(c.id)).toBe(TaskStatus.CANCELED);
    expect(await h.store.purge(T0 + 1_000_000, 10)).toBe(1);
    expect(await h.store.purge(T0 + 1_000_000, 10)).toBe(0);
    expect(await h.status(d.id)).toBe(TaskStatus.PENDING_SUBMIT);
    expect(await h.status(live.id)).toBe(TaskStatus.SUBMITTING);
    expect(await h.status(pend.id)).toBe(TaskStatus.PENDING_SUBMIT);
    expect((await h.store.stats()).byStatus[TaskStatus.SUCCEEDED]).toBe(0);
    const again = await h.store.create([h.newTask({ idempotencyKey: 'key-a' })]);
    expect(again[0].created).toBe(true);
  });

  it('purge honours its limit', async () => {
    const h = await ctx.open();
    const ts = await h.create({}, {}, {}, {}, {});
    for (const t of ts) await h.store.cancel(t.id);
    expect(await h.store.purge(T0, 2)).toBe(2);
    expect(await h.store.purge(T0, 2)).toBe(2);
    expect(await h.store.purge(T0, 2)).toBe(1);
    await h.expectEmpty();
  });
}
