import { accountKey, gcra, TaskStatus, type NewTask } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { countBy, ids, rng, sortedIds, T0 } from '../harness';

export function admissionCases(ctx: ContractContext): void {
  it('paused provider: none of its tasks start (even in one batch); others do; resume takes effect', async () => {
    const h = await ctx.open();
    const ps = await h.create({ priority: 10 }, { priority: 10 }, { priority: 9 });
    const qs = await h.create({ providerKey: 'q' }, { providerKey: 'q' });
    const snap = await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    expect(snap.providers.p.paused).toBe(true);
    expect(await h.claimIds(10)).toEqual(ids(qs));
    expect(await h.claim(10)).toEqual([]);
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: false });
    expect((await h.store.getLimits()).providers.p.paused).toBe(false);
    expect(await h.claimIds(10)).toEqual(ids(ps));
  });

  it('paused provider: polling goes on', async () => {
    const h = await ctx.open();
    const t = await h.hold();
    await h.store.markSubmitted({ id: t.id, leaseId: t.leaseId!, version: t.version }, { externalId: 'x', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    expect(ids(await h.store.claimPolls({ owner: 'w', limit: 10, leaseMs: 1000 }))).toEqual([t.id]);
  });

  it('rate: burst at once within one batch, then one token per 1000/qps ms; other providers unaffected', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: 10, burst: 3 });
    const ps = await h.create(...Array.from({ length: 10 }, (_, i) => ({ priority: 5, delayMs: 0, payload: { i } })));
    const qs = await h.create({ providerKey: 'q' }, { providerKey: 'q' });
    const first = await h.claimIds(20);
    expect(first).toEqual([...ids(ps).slice(0, 3), ...ids(qs)]);
    h.clock.advance(99);
    const blocked = await h.claimRaw(20);
    expect(blocked.claimed).toEqual([]);
    if (blocked.nextWakeAt !== null) {
      expect(blocked.nextWakeAt).toBeGreaterThan(T0 + 99);
      expect(blocked.nextWakeAt).toBeLessThanOrEqual(T0 + 100);
    }
    h.clock.advance(1);
    expect(await h.claimIds(20)).toEqual([ps[3].id]);
    h.clock.advance(200);
    expect(await h.claimIds(20)).toEqual(ids(ps).slice(4, 6));
  });

  it('rate: qps without burst admits one at a time', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: 2 });
    await h.create({}, {}, {}, {}, {});
    expect(await h.claim(5)).toHaveLength(1);
    h.clock.advance(499);
    expect(await h.claim(5)).toHaveLength(0);
    h.clock.advance(1);
    expect(await h.claim(5)).toHaveLength(1);
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: null });
    expect(await h.claim(5)).toHaveLength(3);
  });

  it('rate (GCRA): at most burst + qps*t/1000 starts in any window, exactly as gcra() admits, tokens refill with the clock', async () => {
    const h = await ctx.open();
    const qps = 3;
    const burst = 2;
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps, burst });
    await h.create(...Array.from({ length: 120 }, () => ({})));
    const r = rng(5);
    const steps = [0, 1, 50, 100, 332, 333, 334, 500, 700, 1000, 2500];
    let tat = 0;
    const starts: number[] = [];
    for (let i = 0; i < 60; i++) {
      const now = h.clock.now();
      const k = 1 + r(4);
      let expected = 0;
      for (let j = 0; j < k; j++) {
        const d = gcra(tat, now, qps, burst);
        if (!d.allowed) break;
        tat = d.tat;
        expected++;
      }
      const got = await h.claim(k);
      expect(got).toHaveLength(expected);
      for (let j = 0; j < got.length; j++) starts.push(now);
      h.clock.advance(steps[r(steps.length)]);
    }
    expect(starts.length).toBeGreaterThan(20);
    for (let i = 0; i < starts.length; i++) {
      for (let j = i; j < starts.length; j++) {
        expect(j - i + 1).toBeLessThanOrEqual(burst + (qps * (starts[j] - starts[i])) / 1000 + 1e-9);
      }
    }
  });

  it('account concurrency: provider default accountConcurrency, per account, per provider; tasks without account are not limited', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', accountConcurrency: 2 });
    const specs: Partial<NewTask>[] = [];
    for (let i = 0; i < 4; i++) specs.push({ accountId: 'a1' }, { accountId: 'a2' });
    specs.push({}, {}, { providerKey: 'q', accountId: 'a1' }, { providerKey: 'q', accountId: 'a1' });
    await h.create(...specs);
    const claimed = await h.claim(100);
    expect(countBy(claimed, (t) => `${t.providerKey}/${t.accountId}`)).toEqual({ 'p/a1': 2, 'p/a2': 2, 'p/null': 2, 'q/a1': 2 });
    expect(await h.claim(100)).toEqual([]);
  });

  it('account concurrency: a per-account override beats the provider default; removing it restores the default', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', accountConcurrency: 2 });
    await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a1', concurrency: 3 });
    const snap = await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a2', concurrency: 1 });
    expect(snap.accounts[accountKey('p', 'a2')]).toEqual({ providerKey: 'p', accountId: 'a2', concurrency: 1 });
    const specs: Partial<NewTask>[] = [];
    for (let i = 0; i < 5; i++) specs.push({ accountId: 'a1' }, { accountId: 'a2' }, { accountId: 'a3' });
    await h.create(...specs);
    expect(countBy(await h.claim(100), (t) => t.accountId)).toEqual({ a1: 3, a2: 1, a3: 2 });
    const after = await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a2', concurrency: null });
    expect(after.accounts[accountKey('p', 'a2')]).toBeUndefined();
    expect(countBy(await h.claim(100), (t) => t.accountId)).toEqual({ a2: 1 });
  });

  it('tenant quota: per tenant across providers, defaultTenant for the others, no tenant = unlimited', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'tenant', tenantId: 't1', quota: 2 });
    await h.store.setLimits({ kind: 'defaultTenant', quota: 1 });
    const specs: Partial<NewTask>[] = [];
    for (let i = 0; i < 3; i++) specs.push({ tenantId: 't1' }, { tenantId: 't1', providerKey: 'q' }, { tenantId: 't2' }, { tenantId: 't3', providerKey: 'q' }, {});
    await h.create(...specs);
    const claimed = await h.claim(100);
    expect(countBy(claimed, (t) => t.tenantId)).toEqual({ t1: 2, t2: 1, t3: 1, null: 3 });
    const limits = await h.store.getLimits();
    expect(limits.tenants).toEqual({ t1: 2 });
    expect(limits.defaultTenantQuota).toBe(1);
  });

  it('concurrency key: default limit 1 across providers and tenants, override raises it, 0 admits none', async () => {
    const h = await ctx.open();
    const specs: Partial<NewTask>[] = [];
    for (let i = 0; i < 3; i++) specs.push({ concurrencyKey: 'k1', providerKey: i ? 'q' : 'p', tenantId: `t${i}` }, { concurrencyKey: 'k2' }, { concurrencyKey: 'k3' }, {});
    await h.create(...specs);
    await h.store.setLimits({ kind: 'concurrencyKey', key: 'k3', limit: 0 });
    expect(countBy(await h.claim(100), (t) => t.concurrencyKey)).toEqual({ k1: 1, k2: 1, null: 3 });
    const snap = await h.store.setLimits({ kind: 'concurrencyKey', key: 'k2', limit: 2 });
    expect(snap.concurrencyKeys).toEqual({ k2: 2, k3: 0 });
    expect(countBy(await h.claim(100), (t) => t.concurrencyKey)).toEqual({ k2: 1 });
    expect(await h.claim(100)).toEqual([]);
  });

  it('a task is claimed only when every limit of its lane has room (account, tenant, concurrency key together)', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a1', concurrency: 5 });
    await h.store.setLimits({ kind: 'tenant', tenantId: 't1', quota: 1 });
    const [x, , , w] = await h.create(
      { priority: 3, accountId: 'a1', tenantId: 't1', concurrencyKey: 'k1' },
      { priority: 2, accountId: 'a1', tenantId: 't1', concurrencyKey: 'k2' }, // tenant full
      { priority: 1, accountId: 'a1', tenantId: 't2', concurrencyKey: 'k1' }, // key full
      { priority: 0, accountId: 'a1', tenantId: 't2', concurrencyKey: 'k3' },
    );
    expect(await h.claimIds(10)).toEqual([x.id, w.id]);
  });

  it('the claimed task is always the first admissible one, in one batch and one at a time', async () => {
    for (const batch of [true, false]) {
      const h = await ctx.open();
      const [a, , c, d] = await h.create(
        { priority: 9, concurrencyKey: 'k1' },
        { priority: 8, concurrencyKey: 'k1' },
        { priority: 7, concurrencyKey: 'k2' },
        { priority: 6 },
        { priority: 5, concurrencyKey: 'k2' },
      );
      const got = batch ? await h.claimIds(10) : [...(await h.claimIds(1)), ...(await h.claimIds(1)), ...(await h.claimIds(1)), ...(await h.claimIds(1))];
      expect(got).toEqual([a.id, c.id, d.id]);
    }
  });

  it('no head-of-line blocking: one admissible task behind 10,000 refused ones is claimed in the first batch', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'paused', paused: true });
    await h.store.setLimits({ kind: 'provider', providerKey: 'rated', qps: 1, burst: 1 });
    await h.store.setLimits({ kind: 'provider', providerKey: 'acct', accountConcurrency: 1 });
    await h.store.setLimits({ kind: 'tenant', tenantId: 'ten', quota: 1 });
    // holders: take the token / slot of each limit
    await h.create({ priority: 100, providerKey: 'rated' }, { priority: 100, providerKey: 'acct', accountId: 'a' }, { priority: 100, providerKey: 'x', tenantId: 'ten' }, { priority: 100, providerKey: 'y', concurrencyKey: 'ck' });
    expect(await h.claim(10)).toHaveLength(4);
    const blockers: Partial<NewTask>[] = [];
    const kinds: Partial<NewTask>[] = [{ providerKey: 'paused' }, { providerKey: 'rated' }, { providerKey: 'acct', accountId: 'a' }, { providerKey: 'z', tenantId: 'ten' }, { providerKey: 'w', concurrencyKey: 'ck' }];
    for (let i = 0; i < 10_000; i++) blockers.push({ ...kinds[i % kinds.length], priority: 50 - (i % 7), payload: null });
    const res = await h.store.create([...blockers.map((b) => h.newTask(b)), h.newTask({ providerKey: 'free', priority: -5 })]);
    const target = res[res.length - 1].task;
    expect(await h.claimIds(1)).toEqual([target.id]);
    expect(await h.claim(10)).toEqual([]);
    expect((await h.store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(10_000);
  });

  it('limits raised at runtime take effect at the next claim', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', accountConcurrency: 1, qps: 1, burst: 1 });
    await h.store.setLimits({ kind: 'tenant', tenantId: 't', quota: 1 });
    await h.store.setLimits({ kind: 'defaultTenant', quota: 1 });
    await h.create(...Array.from({ length: 4 }, () => ({ providerKey: 'q', accountId: 'a' })));
    await h.create(...Array.from({ length: 4 }, () => ({ providerKey: 'q', tenantId: 't' })));
    await h.create(...Array.from({ length: 4 }, () => ({ providerKey: 'q', tenantId: 'u' })));
    await h.create(...Array.from({ length: 4 }, () => ({ providerKey: 'q', concurrencyKey: 'k' })));
    await h.create(...Array.from({ length: 4 }, () => ({ providerKey: 'p' })));
    await h.setLimitsAll([{ kind: 'provider', providerKey: 'q', accountConcurrency: 1 }]);
    const first = await h.claim(100);
    expect(countBy(first, (t) => t.accountId ?? t.tenantId ?? t.concurrencyKey ?? t.providerKey)).toEqual({ a: 1, t: 1, u: 1, k: 1, p: 1 });
    await h.setLimitsAll([
      { kind: 'provider', providerKey: 'q', accountConcurrency: 2 },
      { kind: 'tenant', tenantId: 't', quota: 3 },
      { kind: 'defaultTenant', quota: 2 },
      { kind: 'concurrencyKey', key: 'k', limit: 4 },
    ]);
    h.clock.advance(1000); // tat == now: the rate raise below is visible at once under any GCRA reset policy
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: 1000, burst: 2 });
    const second = await h.claim(100);
    expect(countBy(second, (t) => t.accountId ?? t.tenantId ?? t.concurrencyKey ?? t.providerKey)).toEqual({ a: 1, t: 2, u: 1, k: 3, p: 2 });
  });

  it('a limit lowered below the in-flight count is never exceeded: no claim until in-flight drops below it', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'concurrencyKey', key: 'k', limit: 3 });
    await h.create(...Array.from({ length: 6 }, () => ({ concurrencyKey: 'k' })));
    const held = await h.claim(10);
    expect(held).toHaveLength(3);
    await h.store.setLimits({ kind: 'concurrencyKey', key: 'k', limit: 1 });
    expect(await h.claim(10)).toEqual([]);
    await h.complete(held[0]);
    expect(await h.claim(10)).toEqual([]);
    await h.complete(held[1]);
    expect(await h.claim(10)).toEqual([]);
    await h.complete(held[2]);
    expect(await h.claim(10)).toHaveLength(1);
  });

  it('getLimits / setLimits: a field left out is unchanged, null removes, each update returns the snapshot', async () => {
    const h = await ctx.open();
    const empty = await h.store.getLimits();
    expect(empty).toEqual({ providers: {}, accounts: {}, tenants: {}, defaultTenantQuota: null, concurrencyKeys: {}, tenantWeights: {} });
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: 5, burst: 2, accountConcurrency: 3 });
    let snap = await h.store.setLimits({ kind: 'provider', providerKey: 'p', paused: true });
    expect(snap.providers.p).toEqual({ paused: true, qps: 5, burst: 2, accountConcurrency: 3 });
    snap = await h.store.setLimits({ kind: 'provider', providerKey: 'p', qps: null, burst: null });
    expect(snap.providers.p).toEqual({ paused: true, qps: null, burst: null, accountConcurrency: 3 });
    await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a1', concurrency: 4 });
    await h.store.setLimits({ kind: 'tenant', tenantId: 't1', quota: 2 });
    await h.store.setLimits({ kind: 'defaultTenant', quota: 7 });
    snap = await h.store.setLimits({ kind: 'concurrencyKey', key: 'k', limit: 3 });
    expect(snap).toEqual({
      providers: { p: { paused: true, qps: null, burst: null, accountConcurrency: 3 } },
      accounts: { [accountKey('p', 'a1')]: { providerKey: 'p', accountId: 'a1', concurrency: 4 } },
      tenants: { t1: 2 },
      defaultTenantQuota: 7,
      concurrencyKeys: { k: 3 },
      tenantWeights: {},
    });
    expect(await h.store.getLimits()).toEqual(snap);
    await h.store.setLimits({ kind: 'account', providerKey: 'p', accountId: 'a1', concurrency: null });
    await h.store.setLimits({ kind: 'tenant', tenantId: 't1', quota: null });
    await h.store.setLimits({ kind: 'defaultTenant', quota: null });
    snap = await h.store.setLimits({ kind: 'concurrencyKey', key: 'k', limit: null });
    expect({ ...snap, providers: {} }).toEqual({ providers: {}, accounts: {}, tenants: {}, defaultTenantQuota: null, concurrencyKeys: {}, tenantWeights: {} });
  });

  it('admission checks see the whole order: sortedIds agrees with claims under mixed limits', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'p', accountConcurrency: 1 });
    const r = rng(3);
    const tasks = await h.create(...Array.from({ length: 30 }, () => ({ priority: r(5), accountId: `a${r(3)}` })));
    const claimed = await h.claim(30);
    // expected: the first task of each account in global order
    const seen = new Set<string>();
    const expected = sortedIds(tasks).filter((id) => {
      const acc = tasks.find((t) => t.id === id)!.accountId!;
      if (seen.has(acc)) return false;
      seen.add(acc);
      return true;
    });
    expect(ids(claimed)).toEqual(expected);
  });
}
