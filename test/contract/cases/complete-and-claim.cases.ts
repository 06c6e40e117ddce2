import { randomUUID } from 'node:crypto';
import {
  fenceOf,
  StaleLeaseError,
  TaskStatus,
  type ClaimRequest,
  type CompleteAnswer,
  type CompleteCall,
  type CompleteAndClaimResult,
  type NewTask,
  type Task,
} from '../../../libs/priority-queue/src/core';
import type { ContractContext } from '../task-store.contract';
import { ids, nonZero, rng, type Harness } from '../harness';

/**
 * TaskStore.completeAndClaim (issue 15 §1): exactly the completes, in order, then the claim. Each
 * case runs the same script on two fresh stores, one through completeAndClaim and one through
 * complete() and claimSubmissions() apart, and compares what every call answered and what the
 * store holds after (tasks, history, slots, stats).
 */

type Ops = Harness['store'];

/** The two ways of making the same calls. */
const COMBINED = (s: Ops, completes: readonly CompleteCall[], req: ClaimRequest): Promise<CompleteAndClaimResult> => {
  if (!s.completeAndClaim) throw new Error('the store has no completeAndClaim');
  return s.completeAndClaim(completes, req);
};
const APART = async (s: Ops, completes: readonly CompleteCall[], req: ClaimRequest): Promise<CompleteAndClaimResult> => {
  const completed: CompleteAnswer[] = [];
  for (const c of completes) {
    try {
      completed.push({ task: await s.complete(c.fence, c.outcome) });
    } catch (e) {
      completed.push({ error: e as Error });
    }
  }
  return { completed, claim: await s.claimSubmissions(req) };
};

/**
 * What a task looks like without what differs between two stores for the same calls: the lease
 * id (random per claim) and seq (a SQL store's sequence is shared by every queue of its tables;
 * the order it gives is compared through the claims).
 */
function shape(t: Task): object {
  const { seq: _seq, ...rest } = t;
  return { ...rest, leaseId: t.leaseId === null ? null : 'lease' };
}

function answerShape(a: CompleteAnswer): object {
  return a.error ? { error: a.error.constructor.name } : { task: shape(a.task!) };
}

/** Everything the store holds that a caller can see. */
async function snapshot(h: Harness, taskIds: readonly string[]): Promise<object> {
  const stats = await h.store.stats();
  return {
    tasks: await Promise.all(taskIds.map(async (id) => shape(await h.mustGet(id)))),
    history: await Promise.all(taskIds.map((id) => h.store.history(id))),
    byStatus: nonZero(stats.byStatus),
    provider: nonZero(stats.inFlightByProvider),
    account: stats.inFlightByAccount.filter((x) => x.count !== 0),
    tenant: nonZero(stats.inFlightByTenant),
    key: nonZero(stats.inFlightByConcurrencyKey),
  };
}

function resultShape(r: CompleteAndClaimResult): object {
  return {
    completed: r.completed.map(answerShape),
    claimed: r.claim.claimed.map(shape),
    timedOut: r.claim.timedOut.map(shape),
    nextWakeAt: r.claim.nextWakeAt,
    boosted: r.claim.boosted ?? [],
  };
}

/**
 * A world both stores build alike: tasks with fixed ids (created in one call), limits, claims.
 * `script` gets the store and returns the completes and the claim request to send; both stores
 * must answer it alike and hold the same afterwards.
 */
async function sameBothWays(
  ctx: ContractContext,
  world: (h: Harness, id: (name: string) => string) => Promise<{ completes: CompleteCall[]; request: ClaimRequest; taskIds: string[] }>,
): Promise<CompleteAndClaimResult> {
  const out: Array<{ result: object; after: object; raw: CompleteAndClaimResult }> = [];
  for (const way of [COMBINED, APART]) {
    const h = await ctx.open({ historyLimit: 50 });
    // task ids are unique per store (the SQL stores' queues share one table): the tag is taken off to compare
    const tag = `${randomUUID().slice(0, 8)}-`;
    const { completes, request, taskIds } = await world(h, (name) => tag + name);
    const raw = await way(h.store, completes, request);
    const untag = (o: object): object => JSON.parse(JSON.stringify(o).split(tag).join('')) as object;
    out.push({ result: untag(resultShape(raw)), after: untag(await snapshot(h, taskIds)), raw });
  }
  expect(out[0].result).toEqual(out[1].result);
  expect(out[0].after).toEqual(out[1].after);
  return out[0].raw;
}

/** A tagged id without its tag. */
const untagged = (id: string): string => id.slice(id.indexOf('-') + 1);

const OUTCOMES = [
  { status: TaskStatus.SUCCEEDED, result: { ok: 1 } },
  { status: TaskStatus.FAILED, error: 'bad', attempt: true },
  { status: TaskStatus.CANCELED, error: 'canceled' },
  { status: TaskStatus.SUBMIT_UNKNOWN, error: 'lost', attempt: true },
] as const;

export function completeAndClaimCases(ctx: ContractContext): void {
  it('the store has completeAndClaim', async () => {
    const h = await ctx.open();
    expect(typeof h.store.completeAndClaim).toBe('function');
  });

  it('at a full account, tenant and concurrency-key limit: the completes free the slots, the claim of the same call fills them', async () => {
    const lanes: Array<Partial<NewTask>> = [
      { accountId: 'a', concurrencyKey: null },
      { tenantId: 't' },
      { concurrencyKey: 'k' },
    ];
    const r = await sameBothWays(ctx, async (h, id) => {
      await h.setLimitsAll([
        { kind: 'account', providerKey: 'p', accountId: 'a', concurrency: 2 },
        { kind: 'tenant', tenantId: 't', quota: 2 },
        { kind: 'concurrencyKey', key: 'k', limit: 2 },
      ]);
      // per lane 4 tasks: 2 claimed (the limit is full), 2 waiting, with fixed ids and clock steps so both stores agree
      const tasks: NewTask[] = [];
      for (let i = 0; i < 4; i++) for (const [l, lane] of lanes.entries()) tasks.push(h.newTask({ ...lane, id: id(`t-${l}-${i}`), payload: { l, i }, priority: -i }));
      await h.store.create(tasks);
      h.clock.advance(5);
      const held = (await h.claim(100)).sort((x, y) => x.id.localeCompare(y.id));
      expect(held.map((t) => t.id)).toEqual(['t-0-0', 't-0-1', 't-1-0', 't-1-1', 't-2-0', 't-2-1'].map(id));
      h.clock.advance(7);
      const completes = held.map((t, i) => ({ fence: fenceOf(t), outcome: { ...OUTCOMES[i % OUTCOMES.length] } }));
      return { completes, request: { owner: 'w2', limit: 100, leaseMs: 1000 }, taskIds: tasks.map((t) => t.id) };
    });
    expect(r.completed.every((a) => a.task !== undefined)).toBe(true);
    expect(ids(r.claim.claimed).map(untagged).sort()).toEqual(['t-0-2', 't-0-3', 't-1-2', 't-1-3', 't-2-2', 't-2-3']);
  });

  it('a stale fence in the batch is refused alone: the other completes are written and the claim is not held up', async () => {
    const r = await sameBothWays(ctx, async (h, id) => {
      await h.setLimitsAll([{ kind: 'tenant', tenantId: 't', quota: 2 }]);
      await h.store.create(['x', 'y', 'z', 'w'].map((n, i) => h.newTask({ payload: 1, id: id(n), tenantId: 't', priority: -i })));
      const [x, y] = await h.claim(10);
      const renewed = await h.store.renewLease(fenceOf(x), 5000); // x's fence in hand is now one version behind
      expect(renewed.version).toBe(x.version + 1);
      const completes = [
        { fence: fenceOf(x), outcome: { status: TaskStatus.SUCCEEDED } },
        { fence: fenceOf(y), outcome: { status: TaskStatus.SUCCEEDED, result: 'y' } },
        { fence: { id: id('missing'), leaseId: 'l', version: 1 }, outcome: { status: TaskStatus.SUCCEEDED } },
      ];
      return { completes, request: { owner: 'w', limit: 10, leaseMs: 1000 }, taskIds: ['x', 'y', 'z', 'w'].map(id) };
    });
    expect(r.completed[0].error).toBeInstanceOf(StaleLeaseError);
    expect(r.completed[1].task?.status).toBe(TaskStatus.SUCCEEDED);
    expect(r.completed[2].error?.constructor.name).toBe('TaskNotFoundError');
    expect(ids(r.claim.claimed).map(untagged)).toEqual(['z']); // y's slot was freed, x still holds its own
  });

  it('completes of polled tasks (SUBMITTED, RUNNING), timeouts and a delayed task due in the claim: as apart', async () => {
    const r = await sameBothWays(ctx, async (h, id) => {
      await h.store.create([
        h.newTask({ payload: 1, id: id('a'), concurrencyKey: 'k' }),
        h.newTask({ payload: 1, id: id('b'), concurrencyKey: 'k2' }),
        h.newTask({ payload: 1, id: id('late'), timeoutMs: 10 }),
        h.newTask({ payload: 1, id: id('later'), delayMs: 20, concurrencyKey: 'k' }),
        h.newTask({ payload: 1, id: id('next'), concurrencyKey: 'k', priority: -1 }),
      ]);
      const [a, b] = (await h.claim(2)).sort((x, y) => x.id.localeCompare(y.id));
      const sa = await h.store.markSubmitted(fenceOf(a), { externalId: 'ea', status: TaskStatus.RUNNING, pollDelayMs: 0 });
      await h.store.markSubmitted(fenceOf(b), { externalId: 'eb', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
      h.clock.advance(30);
      const polls = (await h.store.claimPolls({ owner: 'w', limit: 5, leaseMs: 1000 })).sort((x, y) => x.id.localeCompare(y.id));
      expect(ids(polls)).toEqual([sa.id, b.id]);
      const completes = polls.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED, result: t.id } }));
      return { completes, request: { owner: 'w', limit: 1, leaseMs: 1000 }, taskIds: ['a', 'b', 'late', 'later', 'next'].map(id) };
    });
    expect(ids(r.claim.timedOut).map(untagged)).toEqual(['late']);
    expect(ids(r.claim.claimed).map(untagged)).toEqual(['later']); // k was freed by a's complete; 'later' (runAt) is first at priority 0
  });

  it('no completes, or no room to claim (limit 0): the same as the single calls', async () => {
    await sameBothWays(ctx, async (h, id) => {
      await h.store.create([h.newTask({ payload: 1, id: id('p1') }), h.newTask({ payload: 1, id: id('p2'), delayMs: 50 })]);
      return { completes: [], request: { owner: 'w', limit: 5, leaseMs: 1000 }, taskIds: ['p1', 'p2'].map(id) };
    });
    await sameBothWays(ctx, async (h, id) => {
      await h.store.create([h.newTask({ payload: 1, id: id('q1') }), h.newTask({ payload: 1, id: id('q2') })]);
      const [q1] = await h.claim(1);
      return { completes: [{ fence: fenceOf(q1), outcome: { status: TaskStatus.FAILED, error: 'e', attempt: true } }], request: { owner: 'w', limit: 0, leaseMs: 1000 }, taskIds: ['q1', 'q2'].map(id) };
    });
  });

  it('a random drain at a tenant quota: many rounds of complete-what-you-hold-and-claim-more, as apart, every slot freed then refilled', async () => {
    const r = await sameBothWays(ctx, async (h, id) => {
      const next = rng(15);
      const TENANTS = 12;
      const limits = [];
      for (let t = 0; t < TENANTS; t++) limits.push({ kind: 'tenant' as const, tenantId: `t${t}`, quota: 1 + (t % 3) });
      await h.setLimitsAll(limits);
      const tasks = Array.from({ length: 240 }, (_, i) => h.newTask({ id: id(`r${String(i).padStart(3, '0')}`), tenantId: `t${next(TENANTS)}`, priority: next(5), payload: { i } }));
      await h.store.create(tasks);
      // rounds through completeAndClaim; the compared call is the last one
      let held = await h.claim(8, { owner: 'w' });
      for (let round = 0; round < 12 && held.length > 0; round++) {
        h.clock.advance(1 + next(3));
        const done = held.filter(() => next(4) !== 0);
        const res = await COMBINED(h.store, done.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED, result: round } })), { owner: 'w', limit: 8 - (held.length - done.length), leaseMs: 60_000 });
        expect(res.completed.map((a) => a.task?.status)).toEqual(done.map(() => TaskStatus.SUCCEEDED));
        held = [...held.filter((t) => !done.includes(t)), ...res.claim.claimed];
      }
      h.clock.advance(1);
      return {
        completes: held.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED, result: 'last' } })),
        request: { owner: 'w', limit: 8, leaseMs: 60_000 },
        taskIds: tasks.map((t) => t.id),
      };
    });
    expect(r.claim.claimed.length).toBeGreaterThan(0);
  });

  it('fence ids are the claimed tasks own: ids unique per call, a second call claims other tasks', async () => {
    const h = await ctx.open();
    await h.store.create(Array.from({ length: 6 }, () => h.newTask({ payload: 1, id: randomUUID() })));
    const held = await h.claim(3);
    const r1 = await COMBINED(h.store, held.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED } })), { owner: 'w', limit: 3, leaseMs: 1000 });
    const r2 = await COMBINED(h.store, r1.claim.claimed.map((t) => ({ fence: fenceOf(t), outcome: { status: TaskStatus.SUCCEEDED } })), { owner: 'w', limit: 3, leaseMs: 1000 });
    expect(r2.completed.every((a) => a.task?.status === TaskStatus.SUCCEEDED)).toBe(true);
    expect(r2.claim.claimed).toEqual([]);
    expect(new Set([...ids(held), ...ids(r1.claim.claimed)]).size).toBe(6);
    expect((await h.store.stats()).byStatus[TaskStatus.SUCCEEDED]).toBe(6);
  });
}
