import {
  FairTagOverflowError,
  FairTags,
  ManualClock,
  TaskStatus,
  ValidationError,
  compareOrder,
  encodeOrderKey,
  fenceOf,
  laneKey,
  type NewTask,
  type Task,
} from '../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../libs/priority-queue/src/redis';
import { MAX_REDIS_FAIR_TAG } from '../../libs/priority-queue/src/stores/redis/codec';
import { noopTask, seeded } from './support/fixtures';
import { useRedisStores } from './support/redis-stores';

/**
 * DESIGN §7 fair share on Redis, where the shared contract cannot look: the state keys (`fairv`
 * V[p], `fairf` F[t,p], `lim_w` weights) against core/fairness.ts FairTags, the order keys the
 * scripts write with the tag in them, the 2^53 bound of Lua numbers, and fairness fixed per queue.
 */
describe('RedisTaskStore fair share (DESIGN §7): state keys, order keys, bounds', () => {
  const redis = useRedisStores();
  let n = 0;
  const open = (opts: { prefix?: string; clock?: ManualClock; fairness?: 'tenant' } = {}) => redis.open({ prefix: `fair${++n}`, fairness: 'tenant', ...opts });
  const SEP = '\u001f';
  const field = (priority: number, tenant: string | null) => `${priority}${SEP}${tenant ?? ''}`;

  async function fairState(store: RedisTaskStore): Promise<{ v: Record<string, string>; f: Record<string, string> }> {
    return { v: await redis.conn.hgetall(`${store.keys.base}fairv`), f: await redis.conn.hgetall(`${store.keys.base}fairf`) };
  }

  it('at scale: tags, V[p] and F[t,p] follow core FairTags through creates, weights, claims, releases and priority changes; order keys carry the tag; drained, only spent F entries may remain', async () => {
    const r = seeded(16);
    const clock = new ManualClock(1_000_000);
    const store = await open({ clock });
    const ref = new FairTags();
    const tenants = Array.from({ length: 200 }, (_, i) => (i === 0 ? null : `t${i}`));
    const weights = new Map<string, number>();
    for (let i = 1; i < tenants.length; i += 7) {
      const w = 1 + Math.floor(r() * 1000);
      weights.set(`t${i}`, w);
      await store.setLimits({ kind: 'tenantWeight', tenantId: `t${i}`, weight: w });
    }
    expect(await redis.conn.hlen(`${store.keys.base}lim_w`)).toBe(weights.size);
    expect((await store.getLimits()).tenantWeights).toEqual(Object.fromEntries(weights));
    const weightOf = (t: string | null) => (t === null ? 1 : (weights.get(t) ?? 1));
    const levels = [-3, 0, 7];
    const pending = new Map<string, Task>();
    const leased = new Map<string, Task>();
    const seen = new Set<string>(); // (tenant, level) pairs ever tagged
    const left = new Set<string>(); // (tenant, level) pairs a task left by a priority change

    const checkState = async () => {
      const { v, f } = await fairState(store);
      for (const p of levels) expect(BigInt(v[String(p)] ?? '0')).toBe(ref.virtualTime(p));
      // an F at or below V changes nothing: compare what each pair's next tag would start from
      for (const k of seen) {
        const [p, t] = k.split(SEP);
        const tenant = t === '' ? null : t;
        const vp = ref.virtualTime(Number(p));
        const mine = BigInt(f[k] ?? '0');
        const theirs = ref.finishTag(tenant, Number(p));
        expect([k, mine > vp ? mine : vp]).toEqual([k, theirs > vp ? theirs : vp]);
      }
      for (const k of Object.keys(f)) expect(seen.has(k)).toBe(true);
    };
    const checkKeys = async () => {
      const lanes = new Map<string, Set<string>>();
      for (const t of pending.values()) {
        const lane = laneKey(t);
        if (!lanes.has(lane)) lanes.set(lane, new Set(await redis.conn.zrange(`${store.keys.base}lane:${lane}`, 0, -1)));
        expect(t).toEqual(await store.get(t.id));
        expect(lanes.get(lane)!.has(encodeOrderKey(t, 0, true) + t.id)).toBe(true);
      }
    };

    for (let round = 0; round < 40; round++) {
      clock.advance(1 + Math.floor(r() * 50));
      const batch: NewTask[] = Array.from({ length: 20 + Math.floor(r() * 60) }, () =>
        noopTask({ tenantId: tenants[Math.floor(r() * tenants.length)], priority: levels[Math.floor(r() * levels.length)], providerKey: `p${Math.floor(r() * 20)}` }),
      );
      const made = (await store.create(batch)).map((x) => x.task);
      for (const t of made) {
        expect(t.fairTag).toBe(String(ref.tag(t.tenantId, t.priority, weightOf(t.tenantId))));
        seen.add(field(t.priority, t.tenantId));
        pending.set(t.id, t);
      }
      // a few priority changes: to another level re-tagged, to its own level unchanged
      for (const t of [...pending.values()].slice(0, 3)) {
        const to = r() < 0.3 ? t.priority : levels[Math.floor(r() * levels.length)];
        const moved = await store.changePriority(t.id, to);
        const tag = to === t.priority ? t.fairTag : String(ref.tag(t.tenantId, to, weightOf(t.tenantId)));
        expect(moved).toMatchObject({ priority: to, fairTag: tag });
        seen.add(field(to, t.tenantId));
        if (to !== t.priority) left.add(field(t.priority, t.tenantId));
        pending.set(t.id, moved);
      }
      const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 1 + Math.floor(r() * 40), leaseMs: 600_000 });
      for (const t of claimed) {
        expect(t).toEqual(await store.get(t.id));
        ref.claimed(t.tenantId, t.priority, BigInt(t.fairTag!));
        pending.delete(t.id);
        leased.set(t.id, t);
      }
      // some go back (release, retry): they keep their tags
      for (const t of [...leased.values()].slice(0, Math.floor(r() * 3))) {
        const back = r() < 0.5 ? await store.release(fenceOf(t)) : await store.retry(fenceOf(t), { delayMs: 0, error: 'again' });
        expect(back.fairTag).toBe(t.fairTag);
        leased.delete(t.id);
        pending.set(t.id, back);
      }
      if (round % 8 === 0) {
        await checkKeys();
        await checkState();
      }
    }
    await checkKeys();
    await checkState();
    // drained: every F is <= V; those of a tenant whose last task at the level was claimed were
    // dropped by that claim, only pairs a task left by a priority change may keep theirs (as on memory)
    for (;;) {
      const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 500, leaseMs: 600_000 });
      if (claimed.length === 0) break;
      for (const t of claimed) ref.claimed(t.tenantId, t.priority, BigInt(t.fairTag!));
    }
    expect((await store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(0);
    await checkState();
    const end = await fairState(store);
    for (const [k, f] of Object.entries(end.f)) {
      expect(left.has(k)).toBe(true);
      expect(BigInt(f) <= BigInt(end.v[k.split(SEP)[0]])).toBe(true);
    }
    expect(Object.keys((await fairState(store)).v).sort()).toEqual(levels.map(String).sort());
  });

  it('F entries a claim made obsolete are dropped; the others stay', async () => {
    const store = await open({ clock: new ManualClock() });
    const [a1, , b1] = (await store.create([noopTask({ tenantId: 'a' }), noopTask({ tenantId: 'a' }), noopTask({ tenantId: 'b' })])).map((x) => x.task);
    expect((await fairState(store)).f).toEqual({ [field(0, 'a')]: '2000000', [field(0, 'b')]: '1000000' });
    const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 60_000 });
    expect(claimed.map((t) => t.id)).toEqual([a1.id, b1.id]);
    // V = 1e6: b's F (1e6) is spent and dropped, a's (2e6, a task still waits) stays
    expect(await fairState(store)).toEqual({ v: { '0': '1000000' }, f: { [field(0, 'a')]: '2000000' } });
  });

  it('query: pages cut short by the read budget resume after the fair tag of the last task read (the cursor carries it)', async () => {
    const r = seeded(53);
    const store = await open({ clock: new ManualClock(1_000) });
    const inputs = Array.from({ length: 4500 }, (_, i) =>
      noopTask({ type: i % 1000 === 7 ? 'rare' : 'noise', tenantId: `t${Math.floor(r() * 30)}`, priority: i % 3 === 0 ? 1 : 0, providerKey: `p${i % 5}` }),
    );
    for (let i = 0; i < inputs.length; i += 1500) await store.create(inputs.slice(i, i + 1500));
    const want = (await Promise.all(inputs.filter((t) => t.type === 'rare').map((t) => store.get(t.id)))).map((t) => t!);
    want.sort(compareOrder);
    const got: Task[] = [];
    let cursor: string | undefined;
    let cut = 0;
    do {
      if (cut > 50) throw new Error('the pages do not end: a cursor went back');
      const page = await store.query({ status: TaskStatus.PENDING_SUBMIT, type: 'rare', limit: 10, cursor });
      if (page.tasks.length < 10 && page.nextCursor !== null) cut++;
      got.push(...page.tasks);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(cut).toBeGreaterThan(0);
    expect(got.map((t) => t.id)).toEqual(want.map((t) => t.id));
  });

  describe(`tags stop at 2^53 - 1 (Lua numbers are doubles): FairTagOverflowError, nothing written`, () => {
    const MAX = MAX_REDIS_FAIR_TAG;

    it('a create reaching the bound succeeds exactly; one past it fails the whole batch', async () => {
      const store = await open({ clock: new ManualClock() });
      const fkey = `${store.keys.base}fairf`;
      await redis.conn.hset(fkey, field(0, 'big'), String(MAX - 1_000_000));
      const [{ task }] = await store.create([noopTask({ tenantId: 'big' })]);
      expect(task.fairTag).toBe(String(MAX));
      expect(await store.get(task.id)).toEqual(task);
      const seq = await redis.conn.get(`${store.keys.base}seq`);
      const ok = noopTask({ tenantId: 'small' });
      await expect(store.create([ok, noopTask({ tenantId: 'big' })])).rejects.toBeInstanceOf(FairTagOverflowError);
      expect(await store.get(ok.id)).toBeNull();
      expect(await redis.conn.get(`${store.keys.base}seq`)).toBe(seq);
      expect((await fairState(store)).f).toEqual({ [field(0, 'big')]: String(MAX) });
      expect((await store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(1);
    });

    it('a changePriority whose re-tag would pass it fails and changes nothing; a boost too (it stays unfired)', async () => {
      const clock = new ManualClock();
      const store = await open({ clock });
      const [{ task }, { task: boosted }] = await store.create([
        noopTask({ tenantId: 't' }),
        noopTask({ tenantId: 't', timeoutMs: 10_000, boost: { beforeDeadlineMs: 5000, priority: 5 } }),
      ]);
      await redis.conn.hset(`${store.keys.base}fairv`, '5', String(MAX - 10));
      await expect(store.changePriority(task.id, 5)).rejects.toBeInstanceOf(FairTagOverflowError);
      expect(await store.get(task.id)).toEqual(task);
      const lane = `${store.keys.base}lane:${laneKey(task)}`;
      expect(await redis.conn.zrange(lane, 0, -1)).toEqual([task, boosted].map((t) => encodeOrderKey(t, 0, true) + t.id));
      clock.advance(5000);
      await expect(store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 1000 })).rejects.toBeInstanceOf(FairTagOverflowError);
      expect(await store.get(boosted.id)).toEqual(boosted);
      expect(await redis.conn.zcard(`${store.keys.base}boosts`)).toBe(1);
      // room again: the boost fires at the next claim, re-tagged at its level
      await redis.conn.hset(`${store.keys.base}fairv`, '5', '0');
      const claim = await store.claimSubmissions({ owner: 'w', limit: 1, leaseMs: 1000 });
      expect(claim.boosted?.map((b) => b.task)).toMatchObject([{ id: boosted.id, priority: 5, fairTag: '1000000' }]);
      expect(claim.claimed.map((t) => t.id)).toEqual([boosted.id]);
    });
  });

  describe('fairness is fixed for the queue (like agingIntervalMs)', () => {
    it('a store with another fairness on the queue is refused at init, either way, and the queue is left as it was', async () => {
      const clock = new ManualClock(5000);
      const fair = await open({ prefix: 'fixed', clock });
      await fair.create([noopTask({ tenantId: 'a' })]);
      clock.advance(1000);
      const plain = redis.track(new RedisTaskStore({ connection: redis.conn, prefix: 'fixed', clock }));
      await expect(plain.init()).rejects.toThrow(ValidationError);
      await expect(plain.init()).rejects.toThrow(/fairness = 'tenant'.*asks for off/);
      // its due sets (stats' oldest wait with fair share) survived the refused init
      expect((await fair.stats()).pending).toEqual([{ priority: 0, count: 1, oldestWaitMs: 1000 }]);
      await redis.open({ prefix: 'plain' });
      const wantsFair = redis.track(new RedisTaskStore({ connection: redis.conn, prefix: 'plain', fairness: 'tenant' }));
      await expect(wantsFair.init()).rejects.toThrow(/fairness = off.*asks for 'tenant'/);
      // aging and fairness together: refused before any key is touched
      expect(() => new RedisTaskStore({ connection: redis.conn, prefix: 'x', fairness: 'tenant', agingIntervalMs: 1000 })).toThrow(ValidationError);
    });

    it('a queue recorded by a version without fair share (no `fairness` in meta) is a queue without it', async () => {
      const legacy = `{legacy${++n}:default}:meta`;
      await redis.conn.hset(legacy, 'agingIntervalMs', '0', 'keys', 'escaped-tag');
      const fair = redis.track(new RedisTaskStore({ connection: redis.conn, prefix: `legacy${n}`, fairness: 'tenant' }));
      await expect(fair.init()).rejects.toThrow(ValidationError);
      const plain = await redis.open({ prefix: `legacy${n}` });
      expect(await redis.conn.hget(legacy, 'fairness')).toBe('off');
      await plain.create([noopTask({})]);
    });

    it('a tenant weight is kept in the queue (lim_w): another store on the queue tags with it; a queue without fairness refuses it', async () => {
      const clock = new ManualClock();
      const a = await open({ prefix: 'weights', clock });
      const b = redis.track(new RedisTaskStore({ connection: redis.conn, prefix: 'weights', fairness: 'tenant', clock }));
      await a.setLimits({ kind: 'tenantWeight', tenantId: 'gold', weight: 4 });
      expect(await redis.conn.hgetall(`${a.keys.base}lim_w`)).toEqual({ gold: '4' });
      const [{ task }] = await b.create([noopTask({ tenantId: 'gold' })]);
      expect(task.fairTag).toBe('250000');
      await b.setLimits({ kind: 'tenantWeight', tenantId: 'gold', weight: null });
      expect(await redis.conn.exists(`${a.keys.base}lim_w`)).toBe(0);
      expect((await a.create([noopTask({ tenantId: 'gold' })]))[0].task.fairTag).toBe('1250000');
      const plain = await redis.open({ prefix: `weights-off${++n}` });
      await expect(plain.setLimits({ kind: 'tenantWeight', tenantId: 'gold', weight: 2 })).rejects.toThrow(ValidationError);
      expect(await redis.conn.exists(`${plain.keys.base}lim_w`)).toBe(0);
    });
  });
});
