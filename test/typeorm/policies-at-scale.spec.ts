import { fenceOf, ManualClock, TaskStatus, type LimitUpdate, type NewTask, type Task, type TaskStore } from '../../libs/priority-queue/src/core';
import { ReferenceModel } from '../model/reference-model';
import { rng } from '../contract/harness';
import { typeOrmStoreFactory, TYPEORM_POLICIES, type DialectName } from './typeorm-dialects';

/**
 * DESIGN §7 on the TypeORM store at scale, against the reference model (test/model): 300
 * tenants (100 with weights, some with quotas) over 40 providers (hundreds of lanes), a backlog
 * of about 2,000 tasks created in batches while a long drain claims, completes and re-prioritises,
 * a third of the tasks with deadline boosts falling due all along the drain. Every claim must
 * return exactly the model's tasks in the model's order with the same boosts fired before it,
 * and every task's priority and fair tag must match at the end. The model-based test's worlds
 * have 4 tenants: this is the one with many tenants and levels at once.
 * Cost: about 10 s on SQLite, 30 s on MariaDB on an idle machine; PostgreSQL 20 s on the loaded 2-core one.
 */
const DIALECTS: DialectName[] = (['sqlite', 'mariadb', 'postgres'] as const).filter((d) => TYPEORM_POLICIES[d].fairness && TYPEORM_POLICIES[d].boost);
const T0 = 1_700_000_000_000;
const TIMEOUT_MS = 10_000_000;

describe.each(DIALECTS)('TypeORM store on %s: fair share and deadline boosts at scale, like the reference model', (dialect) => {
  const factory = typeOrmStoreFactory(dialect);
  jest.setTimeout(300_000);
  afterAll(() => factory.teardown?.());

  it('300 tenants with weights and quotas, 40 providers, 2,000 tasks, boosts falling due during a long drain', async () => {
    const clock = new ManualClock(T0);
    const store: TaskStore = await factory.create({ clock, fairness: 'tenant' });
    await store.init();
    const model = new ReferenceModel(clock, 0, true);
    const r = rng(2026);
    const tenants = Array.from({ length: 300 }, (_, i) => `t${i}`);
    const set = async (u: LimitUpdate) => {
      await store.setLimits(u);
      model.setLimits(u);
    };
    for (const t of tenants.slice(0, 100)) await set({ kind: 'tenantWeight', tenantId: t, weight: [2, 3, 5, 10, 1000][r(5)] });
    for (const t of tenants.slice(280)) await set({ kind: 'tenant', tenantId: t, quota: 1 + r(2) });
    let n = 0;
    const create = async (count: number) => {
      const batch: NewTask[] = Array.from({ length: count }, () => {
        const tenantId = r(10) === 0 ? null : tenants[r(tenants.length)];
        const boost = r(3) === 0 ? { beforeDeadlineMs: TIMEOUT_MS - (1 + r(2500)), priority: r(4) } : null;
        return {
          id: `s${++n}`, idempotencyKey: null, type: 'job', payload: null, priority: r(3), providerKey: `p${r(40)}`,
          accountId: null, tenantId, concurrencyKey: null, delayMs: r(8) === 0 ? r(500) : 0,
          timeoutMs: boost ? TIMEOUT_MS : null, boost, maxAttempts: 1, idempotent: true,
        };
      });
      const made = await store.create(batch);
      expect(model.create(batch)).not.toBe('conflict');
      for (const m of made) expect(m.task.fairTag).toBe(model.get(m.task.id)!.fairTag);
    };
    const held: Array<{ task: Task; modelLease: string }> = [];
    let claimed = 0;
    let boosted = 0;
    await create(1000);
    for (let round = 0; round < 150; round++) {
      if (round % 10 === 5) await create(50 + r(100));
      clock.advance(r(60));
      if (r(4) === 0) {
        // a pending task moves to another level: re-tagged there (both sides)
        const pending = model.tasks.filter((t) => t.status === TaskStatus.PENDING_SUBMIT);
        if (pending.length > 0) {
          const t = pending[r(pending.length)];
          const to = r(4) - 1;
          const got = await store.changePriority(t.id, to);
          expect(model.changePriority(t.id, to)).toBe('ok');
          expect(got.fairTag).toBe(model.get(t.id)!.fairTag);
        }
      }
      const limit = 1 + r(40);
      const got = await store.claimSubmissions({ owner: 'w', limit, leaseMs: 60_000 });
      const want = model.claimSubmissions(limit, 60_000, 'w');
      // the boosts fired before the claim, in order, each with the priority and tag it gave (a claim re-tags nothing)
      expect((got.boosted ?? []).map((b) => [b.task.id, b.fromPriority, b.task.priority, b.task.fairTag])).toEqual(
        want.boosted.map((b) => [b.id, b.fromPriority, model.get(b.id)!.priority, model.get(b.id)!.fairTag]),
      );
      expect(got.claimed.map((t) => [t.id, t.priority, t.fairTag])).toEqual(want.claimed.map((t) => [t.id, t.priority, t.fairTag]));
      claimed += got.claimed.length;
      boosted += want.boosted.length;
      got.claimed.forEach((t, i) => held.push({ task: t, modelLease: want.claimed[i].leaseId! }));
      // complete about half of what is held (frees the quota-limited tenants' slots)
      for (let k = held.length - 1; k >= 0; k--) {
        if (r(2) === 0) continue;
        const h = held.splice(k, 1)[0];
        await store.complete(fenceOf(h.task), { status: TaskStatus.SUCCEEDED });
        expect(model.complete(h.task.id, h.modelLease, TaskStatus.SUCCEEDED, null, null).ok).toBe(true);
      }
    }
    expect(claimed).toBeGreaterThan(1500);
    expect(boosted).toBeGreaterThan(80);
    // every task: status, priority and tag as the model has them (one list read per status)
    const stored = new Map<string, Task>();
    for (const status of new Set(model.tasks.map((m) => m.status))) for (const t of await store.list({ status, limit: 100_000 })) stored.set(t.id, t);
    expect(model.tasks.map((m) => [m.id, stored.get(m.id)?.status, stored.get(m.id)?.priority, stored.get(m.id)?.fairTag])).toEqual(
      model.tasks.map((m) => [m.id, m.status, m.priority, m.fairTag]),
    );
    await store.close();
  });

  it('concurrent creates of one tenant and level (20 calls at once over the pool) never repeat a tag', async () => {
    const clock = new ManualClock(T0);
    const store: TaskStore = await factory.create({ clock, fairness: 'tenant' });
    await store.init();
    let n = 0;
    const task = (tenantId: string): NewTask => ({
      id: `c${++n}`, idempotencyKey: null, type: 'job', payload: null, priority: 0, providerKey: 'p', accountId: null, tenantId,
      concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 1, idempotent: true,
    });
    const made = (await Promise.all(Array.from({ length: 20 }, (_, i) => store.create([task('a'), task(i % 2 ? 'b' : 'a'), task('a')])))).flat();
    const tagsOf = (t: string) => made.filter((m) => m.task.tenantId === t).map((m) => BigInt(m.task.fairTag!)).sort((x, y) => (x < y ? -1 : 1));
    expect(tagsOf('a')).toEqual(Array.from({ length: 50 }, (_, i) => BigInt((i + 1) * 1_000_000)));
    expect(tagsOf('b')).toEqual(Array.from({ length: 10 }, (_, i) => BigInt((i + 1) * 1_000_000)));
    await store.close();
  });
});
