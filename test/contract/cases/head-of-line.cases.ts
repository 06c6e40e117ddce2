import { fenceOf, TaskStatus, type NewTask, type Task } from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, rng, shuffle, sortedIds, type Harness } from '../harness';

/**
 * DESIGN §3 "no head-of-line blocking ... whatever the number of refused candidates ahead of it",
 * with the refused candidates in MANY LANES (a lane = one set of admission keys): a store that
 * reads ready lanes in pages, or bounds the lanes one claim examines, must go on until it has its
 * tasks or no ready lane is left. (10,000 refused tasks in five lanes, admission.cases.ts, do not
 * reach a page boundary.)
 */

/**
 * `n` distinct lanes that every claim refuses, the reasons interleaved (lane i has reason i % 5):
 * paused provider, rate token spent, account full, tenant full (default quota), concurrency key
 * at its limit. The slots and the rate tokens are taken by claimed holders.
 */
async function refusedLanes(h: Harness, n: number): Promise<Partial<NewTask>[]> {
  const lanes: Partial<NewTask>[] = [];
  for (let i = 0; i < n; i++) {
    switch (i % 5) {
      case 0:
        lanes.push({ providerKey: `paused${i % 7}`, accountId: `pa${i}` });
        break;
      case 1:
        lanes.push({ providerKey: `rated${i % 3}`, accountId: `ra${i}` });
        break;
      case 2:
        lanes.push({ providerKey: 'acct', accountId: `aa${i}` });
        break;
      case 3:
        lanes.push({ providerKey: 'ten', tenantId: `tt${i}` });
        break;
      default:
        lanes.push({ providerKey: 'key', concurrencyKey: `kk${i}` });
    }
  }
  for (let p = 0; p < 7; p++) await h.store.setLimits({ kind: 'provider', providerKey: `paused${p}`, paused: true });
  for (let p = 0; p < 3; p++) await h.store.setLimits({ kind: 'provider', providerKey: `rated${p}`, qps: 1, burst: 1 });
  await h.store.setLimits({ kind: 'provider', providerKey: 'acct', accountConcurrency: 1 });
  await h.store.setLimits({ kind: 'defaultTenant', quota: 1 });
  // holders: the rate token of each rated provider, one slot of every account / tenant / key lane
  const holders: Partial<NewTask>[] = [0, 1, 2].map((p) => ({ providerKey: `rated${p}` }));
  for (let i = 0; i < n; i++) if (i % 5 >= 2) holders.push({ ...lanes[i], priority: 1000 });
  const held = await h.create(...holders.map((o) => ({ priority: 1000, ...o, payload: null })));
  expect((await h.claim(held.length)).length).toBe(held.length);
  return lanes;
}

/** Creates all in ONE store call, in a shuffled order (seq order unrelated to the claim order). */
async function createShuffled(h: Harness, specs: Partial<NewTask>[], seed: number): Promise<Task[]> {
  const res = await h.store.create(shuffle(specs.map((s) => h.newTask(s)), rng(seed)));
  expect(res.every((r) => r.created)).toBe(true);
  return res.map((r) => r.task);
}

export function headOfLineCases(ctx: ContractContext): void {
  it('300 refused lanes (paused, rate, account, tenant, key) ahead of one admissible task: ONE claim of 1 returns it', async () => {
    const h = await ctx.open();
    const lanes = await refusedLanes(h, 300);
    const r = rng(11);
    // every lane's head is better than the target; half the lanes have a second task
    const blockers = lanes.flatMap((l, i) => Array.from({ length: 1 + (i % 2) }, (_, j) => ({ ...l, priority: 10 + r(50), payload: { i, j } })));
    const created = await createShuffled(h, [...blockers, { providerKey: 'free', priority: 0 }], 12);
    const target = created.find((t) => t.providerKey === 'free')!;
    expect(await h.claimIds(1)).toEqual([target.id]);
    expect(await h.claim(10)).toEqual([]);
    expect((await h.store.stats()).byStatus[TaskStatus.PENDING_SUBMIT]).toBe(blockers.length);
  });

  for (const limit of [1, 5, 40]) {
    it(`admissible tasks scattered behind hundreds of refused lanes, several pages deep: a claim of ${limit} returns exactly the first ${limit} admissible, in order`, async () => {
      const h = await ctx.open();
      const refused = limit === 40 ? 500 : 300;
      const lanes = await refusedLanes(h, refused);
      const admissible = limit + 3;
      const r = rng(100 + limit);
      // the global order: three clusters of admissible tasks (a few refused lanes between them),
      // each behind a run of a third of the refused lanes (100 or more: several pages of lanes)
      const order: Array<'refused' | 'admissible'> = [];
      const gap = Math.floor(refused / 3);
      let refusedLeft = refused;
      let admissibleLeft = admissible;
      const pushRefused = (k: number) => {
        for (let i = 0; i < k && refusedLeft > 0; i++, refusedLeft--) order.push('refused');
      };
      for (let c = 0; c < 3; c++) {
        pushRefused(gap);
        const size = Math.ceil(admissibleLeft / (3 - c));
        for (let k = 0; k < size; k++, admissibleLeft--) {
          order.push('admissible');
          pushRefused(r(3));
        }
      }
      pushRefused(refusedLeft);
      let lane = 0;
      const specs: Partial<NewTask>[] = order.map((kind, rank) => {
        const priority = 10_000 - rank * 10;
        if (kind === 'refused') return { ...lanes[lane++], priority };
        // some admissible tasks share a lane, others each have their own (limits with room)
        return rank % 3 === 0 ? { providerKey: 'free', accountId: `fa${rank}`, priority } : { providerKey: 'free', priority };
      });
      const created = await createShuffled(h, specs, 200 + limit);
      const expected = sortedIds(created.filter((t) => t.providerKey === 'free'));
      expect([lane, expected.length]).toEqual([refused, admissible]);
      expect(await h.claimIds(limit)).toEqual(expected.slice(0, limit));
      expect(await h.claimIds(admissible)).toEqual(expected.slice(limit));
      expect(await h.claim(admissible)).toEqual([]);
    });
  }

  it('rate-limited provider with 300 lanes: one batch takes its burst in order, then the admissible tasks behind the 297 lanes it refuses', async () => {
    const h = await ctx.open();
    await h.store.setLimits({ kind: 'provider', providerKey: 'rated', qps: 1, burst: 3 });
    const specs: Partial<NewTask>[] = [];
    for (let i = 0; i < 300; i++) specs.push({ providerKey: 'rated', accountId: `r${i}`, priority: 1000 + i });
    for (let j = 0; j < 10; j++) specs.push({ providerKey: 'free', accountId: j % 2 ? `f${j}` : null, priority: j });
    const created = await createShuffled(h, specs, 7);
    const rated = sortedIds(created.filter((t) => t.providerKey === 'rated'));
    const free = sortedIds(created.filter((t) => t.providerKey === 'free'));
    expect(await h.claimIds(10)).toEqual([...rated.slice(0, 3), ...free.slice(0, 7)]);
    expect(await h.claimIds(10)).toEqual(free.slice(7));
    h.clock.advance(1000); // one token
    expect(await h.claimIds(10)).toEqual([rated[3]]);
    expect(await h.claim(10)).toEqual([]);
  });

  it('paused providers with 300 lanes and resume: the claim after resume goes through every lane again, in order', async () => {
    const h = await ctx.open();
    for (let p = 0; p < 3; p++) await h.store.setLimits({ kind: 'provider', providerKey: `p${p}`, paused: true });
    const specs: Partial<NewTask>[] = [];
    for (let i = 0; i < 300; i++) specs.push({ providerKey: `p${i % 3}`, accountId: `a${i}`, priority: 500 + i });
    specs.push({ providerKey: 'free', priority: 0 });
    const created = await createShuffled(h, specs, 8);
    expect(await h.claimIds(1)).toEqual([created.find((t) => t.providerKey === 'free')!.id]);
    await h.store.setLimits({ kind: 'provider', providerKey: 'p1', paused: false });
    const p1 = sortedIds(created.filter((t) => t.providerKey === 'p1'));
    expect(await h.claimIds(40)).toEqual(p1.slice(0, 40));
    expect(await h.claimIds(100)).toEqual(p1.slice(40));
    expect(await h.claim(10)).toEqual([]);
  });

  it('more due tasks past their deadline than one step handles, ahead of an admissible one: one claim times them all out and claims it', async () => {
    const h = await ctx.open();
    const late = await h.create(...Array.from({ length: 1200 }, (_, i) => ({ priority: 10 + (i % 5), timeoutMs: 1000, payload: null })));
    const target = await h.createOne({ priority: 0 });
    h.clock.advance(1000);
    const res = await h.claimRaw(1);
    expect(ids(res.claimed)).toEqual([target.id]);
    expect(new Set(ids(res.timedOut))).toEqual(new Set(ids(late)));
  });

  it('more delayed tasks falling due at once than one step moves: the first claim already takes the best of them', async () => {
    const h = await ctx.open();
    const delayed = await h.create(...Array.from({ length: 5200 }, (_, i) => ({ priority: i % 97, delayMs: 1000, payload: null, providerKey: `p${i % 4}` })));
    h.clock.advance(1000);
    expect(await h.claimIds(3)).toEqual(sortedIds(delayed).slice(0, 3));
  });

  it('recoverExpired(limit) goes past any number of live-leased tasks whose deadline passed to the ones it may recover', async () => {
    const h = await ctx.open();
    await h.create(...Array.from({ length: 150 }, () => ({ timeoutMs: 1000, payload: null })));
    expect(await h.claim(150, { leaseMs: 60_000 })).toHaveLength(150);
    h.clock.advance(1);
    const target = await h.createOne({ timeoutMs: 1000, delayMs: 500 });
    h.clock.advance(2000);
    const got = await h.store.recoverExpired(1);
    expect(got.map((x) => [x.task.id, x.from, x.to])).toEqual([[target.id, TaskStatus.PENDING_SUBMIT, TaskStatus.TIMED_OUT]]);
  });

  it('claimPolls(limit) takes a task whose poll lease expired, behind any number of expired submit leases', async () => {
    const h = await ctx.open();
    await h.create(...Array.from({ length: 30 }, () => ({ payload: null })));
    const [first] = await h.claim(30, { leaseMs: 1000 }); // 29 submit leases end at T0 + 1000
    await h.store.markSubmitted(fenceOf(first), { externalId: 'e', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
    expect(ids(await h.store.claimPolls({ owner: 'w1', limit: 1, leaseMs: 1500 }))).toEqual([first.id]);
    h.clock.advance(2000); // every lease expired, the poll lease last
    expect(ids(await h.store.claimPolls({ owner: 'w2', limit: 1, leaseMs: 1000 }))).toEqual([first.id]);
  });
}
