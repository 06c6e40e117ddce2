import fc from 'fast-check';
import {
  AdmissionControl,
  boostAtOf,
  boostDue,
  boostedPriority,
  compareBoosts,
  resolveBoost,
  compareFairTags,
  compareOrder,
  encodeOrderKey,
  FAIR_QUANTUM,
  fairIncrement,
  FairTagOverflowError,
  FairTags,
  MAX_FAIR_TAG,
  nextFinishTag,
  NotSupportedByStoreError,
  PriorityQueue,
  TaskStatus,
  TaskTypeRegistry,
  validateOrderOptions,
  validateSubmitInput,
  ValidationError,
  type OrderFields,
  type SubmitInput,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import { MemoryTaskStore } from 'nestjs-priority-queue';
import { decodeTransitions, encodeTransitions } from '../../libs/priority-queue/src/core/transition-codec';

const sign = (x: number) => (x < 0 ? -1 : x > 0 ? 1 : 0);
const lex = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('fair tags (core/fairness.ts)', () => {
  it('F[t,p] = max(F[t,p], V[p]) + floor(1e6 / w): the quantum per weight, exact near 2^63', () => {
    expect(fairIncrement(1)).toBe(1_000_000n);
    expect(fairIncrement(3)).toBe(333_333n);
    expect(fairIncrement(1000)).toBe(1000n);
    expect(nextFinishTag(0n, 0n, 1)).toBe(1_000_000n);
    expect(nextFinishTag(5_000_000n, 2_000_000n, 1)).toBe(6_000_000n);
    expect(nextFinishTag(2_000_000n, 5_000_000n, 2)).toBe(5_500_000n);
    const near = MAX_FAIR_TAG - BigInt(FAIR_QUANTUM);
    expect(nextFinishTag(near, 0n, 1)).toBe(MAX_FAIR_TAG);
    expect(() => nextFinishTag(near + 1n, 0n, 1)).toThrow(FairTagOverflowError);
  });

  it('FairTags: a late tenant starts at the level virtual time; levels and tenantless tasks are separate; spent finish tags are dropped', () => {
    const f = new FairTags();
    expect([f.tag('a', 0, 1), f.tag('a', 0, 1), f.tag('a', 0, 1)]).toEqual([1_000_000n, 2_000_000n, 3_000_000n]);
    f.claimed('a', 0, 1_000_000n);
    f.claimed('a', 0, 2_000_000n);
    expect(f.virtualTime(0)).toBe(2_000_000n);
    expect(f.tag('b', 0, 1)).toBe(3_000_000n); // starts at V[0], no credit for its idle time
    expect(f.tag(null, 0, 1)).toBe(3_000_000n); // the tenantless tasks: a tenant of their own
    expect(f.tag('a', 5, 4)).toBe(250_000n); // another level: its own virtual time
    expect(f.finishTag('a', 0)).toBe(3_000_000n);
    f.claimed('a', 0, 3_000_000n); // a's last task at level 0: F[a,0] <= V[0], dropped
    expect(f.finishTag('a', 0)).toBe(0n);
    expect(f.size).toBe(3);
  });

  it('compareFairTags orders decimal tags numerically without parsing', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_FAIR_TAG }), fc.bigInt({ min: 0n, max: MAX_FAIR_TAG }), (a, b) => {
        expect(sign(compareFairTags(a.toString(), b.toString()))).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
      { seed: 3, numRuns: 2000 },
    );
  });

  it('encoded keys with the fair tag sort exactly like compareOrder (priority, tag, runAt, createdAt, seq)', () => {
    const fields: fc.Arbitrary<OrderFields> = fc.record({
      priority: fc.oneof(fc.integer({ min: -2147483648, max: 2147483647 }), fc.constantFrom(-2147483648, 2147483647, 0, 1)),
      fairTag: fc.oneof(fc.bigInt({ min: 0n, max: MAX_FAIR_TAG }), fc.constantFrom(0n, 1_000_000n, MAX_FAIR_TAG)).map(String),
      runAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
      createdAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
      seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    });
    fc.assert(
      fc.property(fields, fields, (a, b) => {
        expect(lex(encodeOrderKey(a, 0, true), encodeOrderKey(b, 0, true))).toBe(sign(compareOrder(a, b)));
      }),
      { seed: 5, numRuns: 5000 },
    );
    const base = { priority: 0, runAt: 10, createdAt: 10, seq: 5 };
    expect(compareOrder({ ...base, priority: 1, fairTag: '9000000' }, { ...base, fairTag: '1000000' })).toBeLessThan(0); // priority first
    expect(compareOrder({ ...base, runAt: 99, fairTag: '1000000' }, { ...base, fairTag: '2000000' })).toBeLessThan(0); // then the tag
    expect(encodeOrderKey({ ...base, fairTag: '1' }, 0, true)).toHaveLength(66);
    expect(() => encodeOrderKey(base, 0, true)).toThrow(/no fair tag/);
  });
});

describe('deadline boost rules (core/boost.ts)', () => {
  it('resolveBoost: kept while it fires after creation; at or before creation the task starts boosted', () => {
    const b = { beforeDeadlineMs: 1000, priority: 7 };
    expect(resolveBoost(0, 5000, b)).toEqual({ priority: 0, boost: b });
    expect(resolveBoost(0, 1000, b)).toEqual({ priority: 7, boost: null });
    expect(resolveBoost(9, 500, b)).toEqual({ priority: 9, boost: null });
    expect(resolveBoost(3, null, b)).toEqual({ priority: 3, boost: null });
    expect(resolveBoost(3, 5000, null)).toEqual({ priority: 3, boost: null });
  });

  it('boosts fire in boostAt then seq order, on pending tasks below their priority only', () => {
    const t = (boostAt: number, seq: number) => ({ boostAt, seq });
    expect([t(5, 3), t(4, 9), t(5, 1)].sort(compareBoosts)).toEqual([t(4, 9), t(5, 1), t(5, 3)]);
    expect(boostDue({ boostAt: 10 }, 9)).toBe(false);
    expect(boostDue({ boostAt: 10 }, 10)).toBe(true);
    expect(boostDue({ boostAt: null }, 10)).toBe(false);
    expect(boostedPriority({ status: TaskStatus.PENDING_SUBMIT, priority: 1, boostPriority: 5 })).toBe(5);
    expect(boostedPriority({ status: TaskStatus.PENDING_SUBMIT, priority: 5, boostPriority: 5 })).toBeNull();
    expect(boostedPriority({ status: TaskStatus.SUBMITTING, priority: 1, boostPriority: 5 })).toBeNull();
    expect(boostAtOf(10_000, 1500)).toBe(8500);
  });
});

describe('options of DESIGN §7', () => {
  it('fairness is tenant or off, never with aging', () => {
    expect(validateOrderOptions({ fairness: 'tenant' })).toEqual({ agingIntervalMs: 0, fairness: 'tenant' });
    expect(validateOrderOptions({})).toEqual({ agingIntervalMs: 0, fairness: null });
    expect(() => validateOrderOptions({ fairness: 'tenants' })).toThrow(/fairness.*'tenant'/);
    expect(() => validateOrderOptions({ fairness: 'tenant', agingIntervalMs: 1000 })).toThrow(/agingIntervalMs = 1000 together with fairness/);
  });

  it.each([
    [{ beforeDeadlineMs: 0, priority: 1 }],
    [{ beforeDeadlineMs: 1.5, priority: 1 }],
    [{ beforeDeadlineMs: 100, priority: 2 ** 31 }],
    [{ beforeDeadlineMs: 100 }],
    [{ beforeDeadlineMs: 100, priority: 1, extra: 1 }],
    ['soon'],
  ])('a bad boost %j is refused with a message naming boost', (boost) => {
    expect(() => validateSubmitInput({ type: 't', boost } as unknown as SubmitInput, 1024)).toThrow(/boost must be \{ beforeDeadlineMs/);
  });

  it('a boost is refused on a task type with a bad one, accepted with null', () => {
    const r = new TaskTypeRegistry();
    expect(() => r.register('a', { boost: { beforeDeadlineMs: -1, priority: 1 } })).toThrow(/boost must be/);
    expect(() => validateSubmitInput({ type: 't', boost: null }, 1024)).not.toThrow();
  });

  it('a boost needs a deadline; a store without boosts says so before writing', async () => {
    const registry = new TaskTypeRegistry();
    registry.register('t', {});
    registry.register('timed', { timeoutMs: 60_000, boost: { beforeDeadlineMs: 10_000, priority: 5 } });
    // a store without boosts: the memory store saying it has none (the queue reads TaskStore.policies)
    const store: MemoryTaskStore = Object.assign(Object.create(new MemoryTaskStore()) as MemoryTaskStore, { policies: { fairness: false, boost: false } });
    const queue = new PriorityQueue({ store, registry });
    await expect(queue.submit({ type: 't', boost: { beforeDeadlineMs: 10, priority: 5 } })).rejects.toThrow(/a deadline boost needs a deadline.*timeoutMs/);
    await expect(queue.submitMany([{ type: 't' }, { type: 't', boost: { beforeDeadlineMs: 10, priority: 5 } }])).rejects.toThrow(/^Task #1 of submitMany: .*needs a deadline/);
    await expect(queue.submit({ type: 'timed', timeoutMs: null })).rejects.toThrow(ValidationError);
    await expect(queue.submit({ type: 'timed' })).rejects.toThrow(NotSupportedByStoreError);
    await expect(queue.submit({ type: 't', timeoutMs: 100, boost: { beforeDeadlineMs: 10, priority: 5 } })).rejects.toThrow(/A deadline boost is not supported by MemoryTaskStore \(its policies say so\)/);
    expect((await queue.submit({ type: 'timed', boost: null })).boostAt).toBeNull(); // null: no boost, even the type's
    expect((await store.stats()).byStatus.PENDING_SUBMIT).toBe(1);
  });

  it.each([
    [{ kind: 'tenantWeight', tenantId: 't', weight: 0 }, /weight: got 0, expected an integer from 1 to 1000/],
    [{ kind: 'tenantWeight', tenantId: 't', weight: 1001 }, /weight/],
    [{ kind: 'tenantWeight', tenantId: 't', weight: 2.5 }, /weight/],
    [{ kind: 'tenantWeight', tenantId: 't', weight: '3' }, /weight: got "3" \(a string\)/],
    [{ kind: 'tenantWeight', tenantId: 't' }, /weight/],
    [{ kind: 'tenantWeight', tenantId: '', weight: 2 }, /tenantId/],
    [{ kind: 'tenantWeight', tenantId: 't', weight: 2, quota: 1 }, /unknown field quota/],
  ])('setTenantWeight / a tenantWeight update %j is refused before reaching the store', async (update, pattern) => {
    const store = new Proxy({} as TaskStore, {
      get: () => () => {
        throw new Error('the store must not be reached with a bad weight');
      },
    });
    await expect(new AdmissionControl(store).apply(update as never)).rejects.toThrow(pattern);
  });
});

describe('boosted events across processes (transition codec)', () => {
  it('carries boostedFrom as a 7th element; transitions keep 6', () => {
    const texts = encodeTransitions([
      { taskId: 'a', type: 't', from: TaskStatus.PENDING_SUBMIT, to: TaskStatus.PENDING_SUBMIT, at: 5, error: null, boostedFrom: -3 },
      { taskId: 'b', type: 't', from: TaskStatus.PENDING_SUBMIT, to: TaskStatus.SUBMITTING, at: 6, error: null },
    ]);
    expect(JSON.parse(texts[0]).map((t: unknown[]) => t.length)).toEqual([7, 6]);
    expect(decodeTransitions(texts[0])).toEqual([
      { taskId: 'a', type: 't', from: TaskStatus.PENDING_SUBMIT, to: TaskStatus.PENDING_SUBMIT, at: 5, error: null, boostedFrom: -3 },
      { taskId: 'b', type: 't', from: TaskStatus.PENDING_SUBMIT, to: TaskStatus.SUBMITTING, at: 6, error: null },
    ]);
    expect(decodeTransitions(JSON.stringify([['a', 't', null, 'PENDING_SUBMIT', 1, null, 'x']]))).toEqual([]);
  });
});
