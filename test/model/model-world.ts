/**
 * What the model-based test (model-based.ts) draws its op sequences from: a WORLD of admission
 * keys (providers, accounts, tenants, concurrency keys) and the op generators over it.
 *
 * - NARROW: 2 providers, 2 accounts, 2 tenants, 2 keys, short sequences, claims of 1 to 6: the
 *   lanes are few, so limits collide often.
 * - WIDE: 6 providers, 6 accounts, 4 tenants, 4 keys (about a thousand possible lanes), long
 *   sequences, claims of 1 to 40, up to 20 limits set up front: hundreds of lanes are refused at
 *   once, so a store that reads ready lanes in pages (or caps the lanes one claim examines) is
 *   taken past its page boundaries.
 * Both weight cancel and changePriority high and aim half of them at the best pending tasks (the
 * heads a store keeps per lane: a stale head is what they make), and some submits run with the
 * clock set back (seq order unlike createdAt order, so the createdAt tie-break decides).
 *
 * DESIGN §7 (stores whose policies include them, see `Policies`): with `boost`, about a fifth of
 * the tasks carry a deadline boost that falls due within the run (its deadline hours away, so no
 * deadline passes: deadlines are not modelled); with `fairness`, limit updates include tenant
 * weights (1, 2, 3, 1000, or back to the default).
 */
import fc from 'fast-check';
import { INT32_MAX, INT32_MIN, TaskStatus, type LimitUpdate } from '../../libs/priority-queue/src/core';

export interface TaskSpec {
  priority: number;
  delayMs: number;
  providerKey: string;
  accountId: string | null;
  tenantId: string | null;
  concurrencyKey: string | null;
  idempotencyKey: string | null;
  idempotent: boolean;
  maxAttempts: number;
  /** DESIGN §7 deadline boost: fires `boostInMs` after creation (deadline BOOST_TIMEOUT_MS away). */
  boost: { boostInMs: number; priority: number } | null;
}

/** Deadline of a task with a boost: hours, so that no deadline passes within a run. */
export const BOOST_TIMEOUT_MS = 10_000_000;

/** Which DESIGN §7 policies a run uses (only those the store implements). */
export interface Policies {
  fairness: boolean;
  boost: boolean;
}

export type PollStatus = TaskStatus.SUBMITTED | TaskStatus.RUNNING;
/** Which task a cancel / changePriority picks: any known task, or one of the best pending ones. */
export type Aim = 'any' | 'top';
export type Op =
  /** skewMs > 0: created with the clock set back by skewMs (and delays of at least skewMs, so nothing new is due early). */
  | { kind: 'submit'; tasks: TaskSpec[]; skewMs: number }
  | { kind: 'claim'; limit: number; leaseMs: number }
  | { kind: 'claimPolls'; leaseMs: number }
  | { kind: 'markSubmitted'; pick: number; status: PollStatus; pollDelayMs: number }
  | { kind: 'recordPoll'; pick: number; status: PollStatus; delayMs: number; pollErrors: number }
  | { kind: 'complete'; pick: number; status: TaskStatus.SUCCEEDED | TaskStatus.FAILED | TaskStatus.CANCELED; remove: boolean }
  /** TaskStore.completeAndClaim: completes of held tasks (picks; with `stale`, one more of a lease lost since), then a claim. */
  | { kind: 'completeAndClaim'; picks: number[]; stale: number | null; status: TaskStatus.SUCCEEDED | TaskStatus.FAILED | TaskStatus.CANCELED; remove: boolean; limit: number; leaseMs: number }
  | { kind: 'retry'; pick: number; delayMs: number }
  | { kind: 'release'; pick: number }
  | { kind: 'renew'; pick: number; leaseMs: number }
  | { kind: 'stale'; pick: number; what: 'complete' | 'retry' | 'release' | 'renew' | 'markSubmitted' }
  | { kind: 'cancel'; pick: number; aim: Aim }
  | { kind: 'changePriority'; pick: number; aim: Aim; priority: number }
  | { kind: 'setLimits'; update: LimitUpdate }
  | { kind: 'advance'; ms: number }
  | { kind: 'recover' }
  | { kind: 'purge'; ageMs: number }
  | { kind: 'requeue'; pick: number };

export interface ModelWorld {
  name: string;
  providers: readonly string[];
  /** Drawn per task; null = none (repeat null to make it more likely). */
  accounts: readonly (string | null)[];
  tenants: readonly (string | null)[];
  keys: readonly (string | null)[];
  /** Claims ask for 1..maxClaim tasks. */
  maxClaim: number;
  /** Limit updates before the backlog, at most. */
  maxLimits: number;
  /** Tasks of the first submit. */
  minBacklog: number;
  maxBacklog: number;
  /** Tasks of a later submit, at most. */
  maxSubmit: number;
  /** Ops after the backlog. */
  minOps: number;
  maxOps: number;
  /** Weight of claims, cancels and priority changes (the others are fixed). */
  claimWeight: number;
  cancelWeight: number;
  changePriorityWeight: number;
  /** The whole state is compared every `compareEvery` ops (and at the end); op results at every op. */
  compareEvery: number;
}

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

export const NARROW: ModelWorld = {
  name: 'narrow',
  providers: names('p', 2),
  accounts: [null, ...names('a', 2)],
  tenants: [null, ...names('t', 2)],
  keys: [null, null, ...names('k', 2)],
  maxClaim: 6,
  maxLimits: 4,
  minBacklog: 5,
  maxBacklog: 25,
  maxSubmit: 6,
  minOps: 20,
  maxOps: 80,
  claimWeight: 5,
  cancelWeight: 3,
  changePriorityWeight: 3,
  compareEvery: 1,
};

export const WIDE: ModelWorld = {
  name: 'wide',
  providers: names('p', 6),
  accounts: [null, null, ...names('a', 6)],
  tenants: [null, null, ...names('t', 4)],
  keys: [null, null, null, ...names('k', 4)],
  maxClaim: 40,
  maxLimits: 20,
  minBacklog: 60,
  maxBacklog: 250,
  maxSubmit: 12,
  minOps: 150,
  maxOps: 300,
  claimWeight: 6,
  cancelWeight: 5,
  changePriorityWeight: 5,
  compareEvery: 10,
};

const priorityArb = fc.oneof(fc.constantFrom(INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1, 0), fc.integer({ min: -3, max: 3 }));
const pick = fc.nat({ max: 1000 });
const aim = fc.constantFrom<Aim>('any', 'top');
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const some = <T>(xs: readonly (T | null)[]): T[] => xs.filter((x): x is T => x !== null);

export function taskSpecArb(w: ModelWorld, p: Policies): fc.Arbitrary<TaskSpec> {
  const boost = p.boost
    ? fc.oneof(
        { weight: 4, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.record({ boostInMs: fc.constantFrom(1, 100, 400, 1000, 3000), priority: priorityArb }) },
      )
    : fc.constant(null);
  return fc.record({
    priority: priorityArb,
    delayMs: fc.constantFrom(0, 0, 0, 100, 1000, 5000),
    providerKey: fc.constantFrom(...w.providers),
    accountId: fc.constantFrom(...w.accounts),
    tenantId: fc.constantFrom(...w.tenants),
    concurrencyKey: fc.constantFrom(...w.keys),
    idempotencyKey: fc.constantFrom(null, null, null, 'i1', 'i2', 'i3'),
    idempotent: fc.constantFrom(true, true, true, false),
    maxAttempts: fc.constantFrom(1, 2, 5),
    boost,
  });
}

export function limitArb(w: ModelWorld, p: Policies): fc.Arbitrary<LimitUpdate> {
  const weights = fc.record({ kind: fc.constant('tenantWeight' as const), tenantId: fc.constantFrom(...some(w.tenants)), weight: fc.constantFrom(null, 1, 2, 3, 1000) });
  const fair: Array<fc.Arbitrary<LimitUpdate>> = p.fairness ? [weights, weights] : [];
  return fc.oneof(
    ...fair,
    fc.record({
      kind: fc.constant('provider' as const),
      providerKey: fc.constantFrom(...w.providers),
      paused: opt(fc.boolean()),
      qps: opt(fc.constantFrom(null, 1, 2.5, 10)),
      burst: opt(fc.constantFrom(null, 1, 3)),
      accountConcurrency: opt(fc.constantFrom(null, 0, 1, 2)),
    }),
    fc.record({
      kind: fc.constant('account' as const),
      providerKey: fc.constantFrom(...w.providers),
      accountId: fc.constantFrom(...some(w.accounts)),
      concurrency: fc.constantFrom(null, 0, 1, 2, 3),
    }),
    fc.record({ kind: fc.constant('tenant' as const), tenantId: fc.constantFrom(...some(w.tenants)), quota: fc.constantFrom(null, 0, 1, 2) }),
    fc.record({ kind: fc.constant('defaultTenant' as const), quota: fc.constantFrom(null, 1, 2) }),
    fc.record({ kind: fc.constant('concurrencyKey' as const), key: fc.constantFrom(...some(w.keys)), limit: fc.constantFrom(null, 0, 1, 2, 3) }),
  );
}

export function opArb(w: ModelWorld, p: Policies): fc.Arbitrary<Op> {
  const pollStatus = fc.constantFrom(TaskStatus.SUBMITTED as PollStatus, TaskStatus.RUNNING as PollStatus);
  const tasks = fc.array(taskSpecArb(w, p), { minLength: 1, maxLength: w.maxSubmit });
  // 1..maxClaim, a third of them 1..3 (a small claim reaches a bound on lanes examined soonest)
  const claimLimit = fc.oneof({ weight: 1, arbitrary: fc.integer({ min: 1, max: Math.min(3, w.maxClaim) }) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: w.maxClaim }) });
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('submit' as const), tasks, skewMs: fc.constant(0) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('submit' as const), tasks, skewMs: fc.constantFrom(50, 100, 1000) }) },
    { weight: w.claimWeight, arbitrary: fc.record({ kind: fc.constant('claim' as const), limit: claimLimit, leaseMs: fc.constantFrom(1000, 5000) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('claimPolls' as const), leaseMs: fc.constantFrom(1000, 5000) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('markSubmitted' as const), pick, status: pollStatus, pollDelayMs: fc.constantFrom(0, 500, 2000) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('recordPoll' as const), pick, status: pollStatus, delayMs: fc.constantFrom(0, 700), pollErrors: fc.nat({ max: 3 }) }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('complete' as const),
        pick,
        status: fc.constantFrom(TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELED),
        // removeOnComplete / removeOnFail `true`: deleted in the step that finishes it (slots freed, key free)
        remove: fc.constantFrom(false, false, true),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('completeAndClaim' as const),
        picks: fc.array(pick, { minLength: 0, maxLength: 6 }),
        stale: fc.option(pick, { freq: 3 }),
        status: fc.constantFrom(TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELED),
        remove: fc.constantFrom(false, false, false, true),
        limit: fc.oneof(fc.constant(0), claimLimit),
        leaseMs: fc.constantFrom(1000, 5000),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('retry' as const), pick, delayMs: fc.constantFrom(0, 300, 2000) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), pick }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('renew' as const), pick, leaseMs: fc.constantFrom(1000, 5000) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('stale' as const), pick, what: fc.constantFrom('complete' as const, 'retry' as const, 'release' as const, 'renew' as const, 'markSubmitted' as const) }) },
    { weight: w.cancelWeight, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick, aim }) },
    { weight: w.changePriorityWeight, arbitrary: fc.record({ kind: fc.constant('changePriority' as const), pick, aim, priority: priorityArb }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('setLimits' as const), update: limitArb(w, p) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(0, 1, 50, 250, 400, 1000, 3000) }) },
    { weight: 2, arbitrary: fc.constant({ kind: 'recover' as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('purge' as const), ageMs: fc.constantFrom(0, 1000) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('requeue' as const), pick }) },
  );
}

/** A whole run: some limits, a backlog, then random ops. */
export function runArb(w: ModelWorld, p: Policies): fc.Arbitrary<Op[]> {
  return fc
    .tuple(
      fc.array(limitArb(w, p), { minLength: 0, maxLength: w.maxLimits, size: 'max' }),
      fc.array(taskSpecArb(w, p), { minLength: w.minBacklog, maxLength: w.maxBacklog, size: 'max' }),
      fc.array(opArb(w, p), { minLength: w.minOps, maxLength: w.maxOps, size: 'max' }),
    )
    .map(([limits, backlog, rest]): Op[] => [
      ...limits.map((update): Op => ({ kind: 'setLimits', update })),
      { kind: 'submit', tasks: backlog, skewMs: 0 },
      ...rest,
    ]);
}
