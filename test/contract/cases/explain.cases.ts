import {
  accountKey,
  compareOrder,
  EXPLAIN_AHEAD_CAP,
  TaskNotFoundError,
  TaskStatus,
  type Task,
  type TaskExplanation,
} from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, shuffle, T0 } from '../harness';

export function explainCases(ctx: ContractContext): void {
  it('not-pending and not-due; a missing task -> TaskNotFoundError', async () => {
    const h = await ctx.open();
    const [later, running] = await h.create({ delayMs: 5000 }, { priority: 1 });
    const [c] = await h.claim(1);
    expect(c.id).toBe(running.id);
    expect(await h.store.explain(running.id)).toMatchObject({ id: running.id, status: TaskStatus.SUBMITTING, now: T0, verdict: 'not-pending' });
    await h.complete(c);
    expect((await h.store.explain(running.id)).verdict).toBe('not-pending');
    const e = await h.store.explain(later.id);
    expect(e).toMatchObject({ id: later.id, status: TaskStatus.PENDING_SUBMIT, now: T0, verdict: 'not-due', dueAt: T0 + 5000 });
    expect(e.message).toMatch(/not due/);
    expect(e.refusedBy).toBeUndefined();
    await expect(h.store.explain('00000000-0000-4000-8000-00000000beef')).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('refused: paused, rate (with the next token time), account, tenant, concurrency key, with use and limit', async () => {
    const h = await ctx.open();
    await h.setLimitsAll([
      { kind: 'provider', providerKey: 'paused', paused: true },
      { kind: 'provider', providerKey: 'rated', qps: 2, burst: 1 },
      { kind: 'provider', providerKey: 'acct', accountConcurrency: 1 },
      { kind: 'tenant', tenantId: 'tn', quota: 2 },
    ]);
    const [paused, r1, r2, a1, a2, t1, t2, t3, k1, k2] = await h.create(
      { providerKey: 'paused', priority: 100 },
      { providerKey: 'rated', priority: 90 },
      { providerKey: 'rated', priority: 89 },
      { providerKey: 'acct', accountId: 'A', priority: 80 },
      { providerKey: 'acct', accountId: 'A', priority: 79 },
      { tenantId: 'tn', priority: 70 },
      { tenantId: 'tn', priority: 69 },
      { tenantId: 'tn', priority: 68 },
      { concurrencyKey: 'K', priority: 60 },
      { concurrencyKey: 'K', priority: 59 },
    );
    expect(await h.claimIds(10)).toEqual(ids([r1, a1, t1, t2, k1]));
    const ex = async (t: Task) => h.store.explain(t.id);
    expect(await ex(paused)).toMatchObject({ verdict: 'refused', refusedBy: { limit: 'paused', key: 'paused' } });
    // GCRA: the first token at T0 was spent; the next is due 500 ms later
    expect(await ex(r2)).toMatchObject({ verdict: 'refused', refusedBy: { limit: 'rate', key: 'rated', nextTokenAt: T0 + 500 } });
    expect(await ex(a2)).toMatchObject({ verdict: 'refused', refusedBy: { limit: 'account', key: accountKey('acct', 'A'), inUse: 1, max: 1 } });
    expect(await ex(t3)).toMatchObject({ verdict: 'refused', refusedBy: { limit: 'tenant', key: 'tn', inUse: 2, max: 2 } });
    expect(await ex(k2)).toMatchObject({ verdict: 'refused', refusedBy: { limit: 'concurrencyKey', key: 'K', inUse: 1, max: 1 } });
    for (const t of [paused, r2, a2, t3, k2]) expect((await ex(t)).message.length).toBeGreaterThan(10);
    // the rate lane is admissible again once its token is due, exactly as the claim sees it
    h.clock.advance(499);
    expect((await ex(r2)).verdict).toBe('refused');
    h.clock.advance(1);
    expect((await ex(r2)).verdict).not.toBe('refused');
    expect(await h.claimIds(10)).toEqual(ids([r2]));
  });

  it('refusal order: pause before rate before account before tenant before concurrency key', async () => {
    const h = await ctx.open();
    await h.setLimitsAll([
      { kind: 'provider', providerKey: 'p', qps: 1, burst: 1, accountConcurrency: 1 },
      { kind: 'tenant', tenantId: 'tn', quota: 1 },
    ]);
    const lane = { providerKey: 'p', accountId: 'A', tenantId: 'tn', concurrencyKey: 'K' };
    const [first, second] = await h.create({ ...lane, priority: 2 }, { ...lane, priority: 1 });
    expect(await h.claimIds(5)).toEqual([first.id]);
    const reasons: string[] = [];
    const why = async () => (await h.store.explain(second.id)).refusedBy?.limit;
    reasons.push(String(await why())); // rate (token spent), account, tenant and key are full too
    h.clock.advance(1000);
    reasons.push(String(await why())); // token due: account is next
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', accountConcurrency: null });
    reasons.push(String(await why()));
    await h.store.setLimits({ kind: 'tenant', tenantId: 'tn', quota: null });
    reasons.push(String(await why()));
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    reasons.push(String(await why()));
    expect(reasons).toEqual(['rate', 'account', 'tenant', 'concurrencyKey', 'paused']);
  });

  it('a slot freed by a finished task counts at once (before any claim applies it)', async () => {
    const h = await ctx.open();
    const [a, b] = await h.create({ concurrencyKey: 'K', priority: 2, tenantId: 'x' }, { concurrencyKey: 'K', priority: 1, tenantId: 'x' });
    const [c] = await h.claim(1);
    expect(c.id).toBe(a.id);
    expect((await h.store.explain(b.id)).verdict).toBe('refused');
    await h.complete(c);
    expect(await h.store.explain(b.id)).toMatchObject({ verdict: 'next', ahead: 0, aheadCapped: false });
    expect(await h.claimIds(1)).toEqual([b.id]);
  });

  it('waiting / next: `ahead` counts due tasks ranked before it in admissible lanes only, and the claim agrees', async () => {
    const h = await ctx.open();
    await h.setLimitsAll([{ kind: 'provider', providerKey: 'off', paused: true }]);
    const [x, , , , , y] = await h.create(
      { priority: 5 }, // x: the subject
      { priority: 9, providerKey: 'off' }, // ranked before, refused lane: not counted
      { priority: 9, delayMs: 1000 }, // not due: not counted
      { priority: 1 }, // ranked after: not counted
      { priority: 6, providerKey: 'other' }, // counted
      { priority: 7, tenantId: 't' }, // counted (y)
    );
    const [z] = await h.create({ priority: 5 }); // same priority, created later: after x
    expect(await h.store.explain(x.id)).toMatchObject({ verdict: 'waiting', ahead: 2, aheadCapped: false });
    expect(await h.store.explain(y.id)).toMatchObject({ verdict: 'next', ahead: 0 });
    expect(await h.store.explain(z.id)).toMatchObject({ verdict: 'waiting', ahead: 3 });
    expect((await h.store.explain(x.id)).message).toMatch(/2 due tasks/);
    const first = await h.claimIds(2);
    expect(first).not.toContain(x.id);
    expect(await h.store.explain(x.id)).toMatchObject({ verdict: 'next', ahead: 0 });
    expect(await h.claimIds(1)).toEqual([x.id]);
    // a due task not yet moved into its lane counts too
    h.clock.advance(1000);
    expect(await h.store.explain(z.id)).toMatchObject({ verdict: 'waiting', ahead: 1 });
  });

  it('with aging: `ahead` follows the aged order', async () => {
    const h = await ctx.open({ agingIntervalMs: 1000 });
    const [old] = await h.create({ priority: 0 });
    h.clock.advance(5000);
    const [hi, top] = await h.create({ priority: 4 }, { priority: 6 });
    // aged keys: old = T0, hi = T0 + 5000 - 4000, top = T0 + 5000 - 6000
    expect(await h.store.explain(old.id)).toMatchObject({ verdict: 'waiting', ahead: 1 });
    expect(await h.store.explain(hi.id)).toMatchObject({ verdict: 'waiting', ahead: 2 });
    expect(await h.store.explain(top.id)).toMatchObject({ verdict: 'next' });
    expect(await h.claimIds(3)).toEqual([top.id, old.id, hi.id]);
  });

  it('at scale: hundreds of lanes with limits, verdicts and `ahead` agree with a brute-force reading of the rule', async () => {
    const h = await ctx.open();
    const r = rng(1313);
    const providers = ['pa', 'pb', 'pc', 'pd'];
    await h.setLimitsAll([
      { kind: 'provider', providerKey: 'pd', paused: true },
      { kind: 'provider', providerKey: 'pb', accountConcurrency: 1 },
      { kind: 'defaultTenant', quota: 2 },
    ]);
    const specs = Array.from({ length: 600 }, () => ({
      priority: r(7) - 3,
      providerKey: providers[r(4)],
      accountId: r(2) ? `acc${r(20)}` : null,
      tenantId: r(2) ? `ten${r(30)}` : null,
      concurrencyKey: r(3) === 0 ? `key${r(40)}` : null,
      delayMs: r(10) === 0 ? 50_000 : 0,
    }));
    await h.store.create(shuffle(specs, r).map((s) => h.newTask(s)));
    h.clock.advance(10);
    await h.claim(150);
    h.clock.advance(10);
    const pending = await h.listAll(TaskStatus.PENDING_SUBMIT);
    const live = [TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING];
    const inFlight: Task[] = [];
    for (const s of live) inFlight.push(...(await h.listAll(s)));
    const count = (pred: (t: Task) => boolean) => inFlight.filter(pred).length;
    const refusal = (t: Task): string | null => {
      if (t.providerKey === 'pd') return 'paused';
      if (t.accountId !== null && t.providerKey === 'pb' && count((u) => u.providerKey === 'pb' && u.accountId === t.accountId) >= 1) return 'account';
      if (t.tenantId !== null && count((u) => u.tenantId === t.tenantId) >= 2) return 'tenant';
      if (t.concurrencyKey !== null && count((u) => u.concurrencyKey === t.concurrencyKey) >= 1) return 'concurrencyKey';
      return null;
    };
    const now = h.clock.now();
    const sample = shuffle(pending, r).slice(0, 40);
    for (const t of sample) {
      const e: TaskExplanation = await h.store.explain(t.id);
      if (t.runAt > now) {
        expect(e.verdict).toBe('not-due');
        continue;
      }
      const why = refusal(t);
      if (why !== null) {
        expect(e.refusedBy?.limit).toBe(why);
        continue;
      }
      const ahead = pending.filter((u) => u.id !== t.id && u.runAt <= now && compareOrder(u, t) < 0 && refusal(u) === null).length;
      expect(e).toMatchObject({ verdict: ahead === 0 ? 'next' : 'waiting', ahead, aheadCapped: false });
    }
  });

  it('`ahead` is capped (and says so) on a deep backlog', async () => {
    const h = await ctx.open();
    const batch = 5000;
    for (let i = 0; i < Math.ceil((EXPLAIN_AHEAD_CAP + 10) / batch); i++) {
      await h.store.create(Array.from({ length: batch }, (_, j) => h.newTask({ priority: 10, providerKey: `p${j % 50}` })));
    }
    const [last] = await h.create({ priority: 1 });
    expect(await h.store.explain(last.id)).toMatchObject({ verdict: 'waiting', ahead: EXPLAIN_AHEAD_CAP, aheadCapped: true });
    expect((await h.store.explain(last.id)).message).toMatch(/more than/);
  });
}
