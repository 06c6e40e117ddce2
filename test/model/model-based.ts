/**
 * Model-based test (fast-check): random op lists run against a store and the ReferenceModel;
 * claimed id sequences (in claim order), poll claims, fenced-write outcomes (ok / StaleLeaseError),
 * cancel / changePriority outcomes, recovery transitions, purge counts and every task's state
 * after every op must be identical. Fixed seed, bounded runs (fast on a server store).
 *
 * Usage: describeModelBasedTest(factory) with the StoreFactory of test/contract.
 * Not modelled on purpose: deadlines (the interplay "expired submit lease AND past deadline"
 * is left open by the port; the contract suite covers deadlines), versions, nextWakeAt.
 */
import fc from 'fast-check';
import {
  ALL_STATUSES,
  INT32_MAX,
  INT32_MIN,
  isTerminal,
  ManualClock,
  StaleLeaseError,
  IdempotencyConflictError,
  InvalidStateError,
  TaskNotFoundError,
  TaskStatus,
  type Fence,
  type LimitUpdate,
  type NewTask,
  type Task,
  type TaskStore,
} from 'nestjs-priority-queue/core';
import type { StoreFactory } from '../contract/task-store.contract';
import { T0 } from '../contract/harness';
import { ReferenceModel, type FencedResult, type ModelTask } from './reference-model';

const PROVIDERS = ['p1', 'p2'] as const;
const ACCOUNTS = [null, 'a1', 'a2'] as const;
const TENANTS = [null, 't1', 't2'] as const;
const KEYS = [null, null, 'k1', 'k2'] as const;
const IDEM = [null, null, null, 'i1', 'i2', 'i3'] as const;

interface TaskSpec {
  priority: number;
  delayMs: number;
  providerKey: string;
  accountId: string | null;
  tenantId: string | null;
  concurrencyKey: string | null;
  idempotencyKey: string | null;
  idempotent: boolean;
  maxAttempts: number;
}

type PollStatus = TaskStatus.SUBMITTED | TaskStatus.RUNNING;
type Op =
  | { kind: 'submit'; tasks: TaskSpec[] }
  | { kind: 'claim'; limit: number; leaseMs: number }
  | { kind: 'claimPolls'; leaseMs: number }
  | { kind: 'markSubmitted'; pick: number; status: PollStatus; pollDelayMs: number }
  | { kind: 'recordPoll'; pick: number; status: PollStatus; delayMs: number; pollErrors: number }
  | { kind: 'complete'; pick: number; status: TaskStatus.SUCCEEDED | TaskStatus.FAILED | TaskStatus.CANCELED }
  | { kind: 'retry'; pick: number; delayMs: number }
  | { kind: 'release'; pick: number }
  | { kind: 'renew'; pick: number; leaseMs: number }
  | { kind: 'stale'; pick: number; what: 'complete' | 'retry' | 'release' | 'renew' | 'markSubmitted' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'changePriority'; pick: number; priority: number }
  | { kind: 'setLimits'; update: LimitUpdate }
  | { kind: 'advance'; ms: number }
  | { kind: 'recover' }
  | { kind: 'purge'; ageMs: number };

const priorityArb = fc.oneof(fc.constantFrom(INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1, 0), fc.integer({ min: -3, max: 3 }));
const pick = fc.nat({ max: 1000 });

const taskSpecArb: fc.Arbitrary<TaskSpec> = fc.record({
  priority: priorityArb,
  delayMs: fc.constantFrom(0, 0, 0, 100, 1000, 5000),
  providerKey: fc.constantFrom(...PROVIDERS),
  accountId: fc.constantFrom(...ACCOUNTS),
  tenantId: fc.constantFrom(...TENANTS),
  concurrencyKey: fc.constantFrom(...KEYS),
  idempotencyKey: fc.constantFrom(...IDEM),
  idempotent: fc.constantFrom(true, true, true, false),
  maxAttempts: fc.constantFrom(1, 2, 5),
});

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const limitArb: fc.Arbitrary<LimitUpdate> = fc.oneof(
  fc.record({
    kind: fc.constant('provider' as const),
    providerKey: fc.constantFrom(...PROVIDERS),
    paused: opt(fc.boolean()),
    qps: opt(fc.constantFrom(null, 1, 2.5, 10)),
    burst: opt(fc.constantFrom(null, 1, 3)),
    accountConcurrency: opt(fc.constantFrom(null, 0, 1, 2)),
  }),
  fc.record({
    kind: fc.constant('account' as const),
    providerKey: fc.constantFrom(...PROVIDERS),
    accountId: fc.constantFrom('a1', 'a2'),
    concurrency: fc.constantFrom(null, 0, 1, 2, 3),
  }),
  fc.record({ kind: fc.constant('tenant' as const), tenantId: fc.constantFrom('t1', 't2'), quota: fc.constantFrom(null, 0, 1, 2) }),
  fc.record({ kind: fc.constant('defaultTenant' as const), quota: fc.constantFrom(null, 1, 2) }),
  fc.record({ kind: fc.constant('concurrencyKey' as const), key: fc.constantFrom('k1', 'k2'), limit: fc.constantFrom(null, 0, 1, 2, 3) }),
);

const pollStatus = fc.constantFrom(TaskStatus.SUBMITTED as PollStatus, TaskStatus.RUNNING as PollStatus);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('submit' as const), tasks: fc.array(taskSpecArb, { minLength: 1, maxLength: 6 }) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('claim' as const), limit: fc.integer({ min: 1, max: 6 }), leaseMs: fc.constantFrom(1000, 5000) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('claimPolls' as const), leaseMs: fc.constantFrom(1000, 5000) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('markSubmitted' as const), pick, status: pollStatus, pollDelayMs: fc.constantFrom(0, 500, 2000) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('recordPoll' as const), pick, status: pollStatus, delayMs: fc.constantFrom(0, 700), pollErrors: fc.nat({ max: 3 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('complete' as const), pick, status: fc.constantFrom(TaskStatus.SUCCEEDED as const, TaskStatus.FAILED as const, TaskStatus.CANCELED as const) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('retry' as const), pick, delayMs: fc.constantFrom(0, 300, 2000) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('renew' as const), pick, leaseMs: fc.constantFrom(1000, 5000) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stale' as const), pick, what: fc.constantFrom('complete' as const, 'retry' as const, 'release' as const, 'renew' as const, 'markSubmitted' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('changePriority' as const), pick, priority: priorityArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('setLimits' as const), update: limitArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(0, 1, 50, 250, 400, 1000, 3000) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'recover' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('purge' as const), ageMs: fc.constantFrom(0, 1000) }) },
);

let idCounter = 0;
function nextId(): string {
  return `00000000-0000-4000-8000-${(++idCounter).toString(16).padStart(12, '0')}`;
}

interface Held {
  id: string;
  storeLeaseId: string;
  storeVersion: number;
  modelLeaseId: string;
}

/** Compared after every op: everything the model decides (not versions / updatedAt). */
function comparable(t: ModelTask | Task) {
  return {
    id: t.id,
    status: t.status,
    priority: t.priority,
    runAt: t.runAt,
    attempts: isTerminal(t.status) ? undefined : t.attempts,
    cancelRequested: t.cancelRequested,
    leaseOwner: t.leaseOwner,
    leaseUntil: t.leaseUntil,
    nextPollAt: t.nextPollAt,
    externalId: t.externalId,
    pollErrors: t.pollErrors,
    finishedAt: t.finishedAt,
  };
}

/** Every task of the store; statuses that stats() reports empty are not listed (saves round trips). */
async function storeSnapshot(store: TaskStore, nonEmpty: readonly TaskStatus[] = ALL_STATUSES): Promise<Task[]> {
  const out: Task[] = [];
  for (const status of nonEmpty) {
    let after: number | undefined;
    for (;;) {
      const page = await store.list({ status, limit: 500, afterSeq: after });
      out.push(...page);
      if (page.length < 500) break;
      after = page[page.length - 1].seq;
    }
  }
  return out;
}

async function outcome<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

class Run {
  readonly model: ReferenceModel;
  readonly held: Held[] = [];

  constructor(
    readonly store: TaskStore,
    readonly clock: ManualClock,
    agingIntervalMs: number,
  ) {
    this.model = new ReferenceModel(clock, agingIntervalMs);
  }

  private validHeld(statuses: readonly TaskStatus[]): Held[] {
    return this.held.filter((h) => {
      const t = this.model.get(h.id);
      return t !== undefined && t.leaseId === h.modelLeaseId && statuses.includes(t.status);
    });
  }

  private staleHeld(): Held[] {
    return this.held.filter((h) => {
      const t = this.model.get(h.id);
      return t !== undefined && t.leaseId !== h.modelLeaseId;
    });
  }

  /** The holder's fence, re-read when its lease is still the current one (a cancel moves the version). */
  private async fence(h: Held): Promise<Fence> {
    const cur = await this.store.get(h.id);
    const version = cur && cur.leaseId === h.storeLeaseId ? cur.version : h.storeVersion;
    return { id: h.id, leaseId: h.storeLeaseId, version };
  }

  private async fenced(h: Held, storeOp: (f: Fence) => Promise<Task>, modelOp: () => FencedResult): Promise<boolean> {
    const f = await this.fence(h);
    const got = await outcome(storeOp(f));
    const want = modelOp();
    if (want.ok) {
      if (!got.ok) throw new Error(`store rejected a valid fenced write on ${h.id}: ${String(got.error)}`);
      expect(comparable(got.value)).toEqual(comparable(want.task));
    } else {
      expect(got.ok ? 'resolved' : got.error).toBeInstanceOf(StaleLeaseError);
    }
    return true;
  }

  private remember(storeTasks: Task[], modelTasks: ModelTask[]): void {
    for (let i = 0; i < storeTasks.length; i++) {
      this.held.push({ id: storeTasks[i].id, storeLeaseId: storeTasks[i].leaseId!, storeVersion: storeTasks[i].version, modelLeaseId: modelTasks[i].leaseId! });
    }
  }

  private allIds(): string[] {
    return this.model.tasks.map((t) => t.id);
  }

  /** Runs one op on both; false when it was a no-op (nothing to compare afterwards). */
  async apply(op: Op): Promise<boolean> {
    const { store, model } = this;
    switch (op.kind) {
      case 'submit': {
        const news: NewTask[] = op.tasks.map((s) => ({ ...s, id: nextId(), type: 'job', payload: { s: s.priority }, timeoutMs: null }));
        // a reused key mostly resubmits its task (tenant, payload as held; created = false); with
        // maxAttempts 1 the input keeps its own, a conflict when they differ (nothing is created)
        const firsts = new Map<string, NewTask>();
        for (const n of news) {
          const k = n.idempotencyKey;
          const held = k === null ? undefined : (firsts.get(k) ?? model.tasks.find((t) => t.idempotencyKey === k));
          if (k !== null && !held) firsts.set(k, n);
          else if (held && n.maxAttempts !== 1) Object.assign(n, { tenantId: held.tenantId, payload: held.payload });
        }
        const res = await outcome(store.create(news));
        const want = model.create(news);
        if (want === 'conflict') expect(res.ok ? 'created' : res.error).toBeInstanceOf(IdempotencyConflictError);
        else if (!res.ok) throw res.error;
        else expect(res.value.map((r) => ({ id: r.task.id, created: r.created }))).toEqual(want);
        return true;
      }
      case 'claim': {
        const res = await store.claimSubmissions({ owner: 'w', limit: op.limit, leaseMs: op.leaseMs });
        const want = model.claimSubmissions(op.limit, op.leaseMs, 'w');
        expect(res.claimed.map((t) => t.id)).toEqual(want.claimed.map((t) => t.id));
        expect(res.timedOut.map((t) => t.id).sort()).toEqual(want.timedOut.map((t) => t.id).sort());
        this.remember(res.claimed, want.claimed);
        return true;
      }
      case 'claimPolls': {
        const got = await store.claimPolls({ owner: 'poller', limit: 1000, leaseMs: op.leaseMs });
        const want = model.claimPolls(1000, op.leaseMs, 'poller');
        const byId = (ts: Array<{ id: string }>) => [...ts].sort((a, b) => a.id.localeCompare(b.id));
        const g = byId(got);
        const w = byId(want);
        expect(g.map((t) => t.id)).toEqual(w.map((t) => t.id));
        this.remember(g as Task[], w as ModelTask[]);
        return true;
      }
      case 'markSubmitted': {
        const c = this.validHeld([TaskStatus.SUBMITTING]);
        if (!c.length) return false;
        const h = c[op.pick % c.length];
        return this.fenced(
          h,
          (f) => store.markSubmitted(f, { externalId: `x-${h.id.slice(-4)}`, status: op.status, pollDelayMs: op.pollDelayMs }),
          () => model.markSubmitted(h.id, h.modelLeaseId, `x-${h.id.slice(-4)}`, op.status, op.pollDelayMs),
        );
      }
      case 'recordPoll': {
        const c = this.validHeld([TaskStatus.SUBMITTED, TaskStatus.RUNNING]);
        if (!c.length) return false;
        const h = c[op.pick % c.length];
        return this.fenced(
          h,
          (f) => store.recordPoll(f, { status: op.status, nextPollDelayMs: op.delayMs, pollErrors: op.pollErrors }),
          () => model.recordPoll(h.id, h.modelLeaseId, op.status, op.delayMs, op.pollErrors),
        );
      }
      case 'complete': {
        const c = this.validHeld([TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING]);
        if (!c.length) return false;
        const h = c[op.pick % c.length];
        const error = op.status === TaskStatus.SUCCEEDED ? null : 'no';
        return this.fenced(
          h,
          (f) => store.complete(f, { status: op.status, result: { done: 1 }, error }),
          () => model.complete(h.id, h.modelLeaseId, op.status, { done: 1 }, error),
        );
      }
      case 'retry': {
        const c = this.validHeld([TaskStatus.SUBMITTING]);
        if (!c.length) return false;
        const h = c[op.pick % c.length];
        return this.fenced(
          h,
          (f) => store.retry(f, { delayMs: op.delayMs, error: 'again' }),
          () => model.retry(h.id, h.modelLeaseId, op.delayMs, 'again'),
        );
      }
      case 'release': {
        const c = this.validHeld([TaskStatus.SUBMITTING]);
        if (!c.length) return false;
        const h = c[op.pick % c.length];
        return this.fenced(
          h,
          (f) => store.release(f),
          () => model.release(h.id, h.modelLeaseId),
        );
      }
      case 'renew': {
        const c = this.validHeld([TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING]);
        if (!c.length) return false;
        const h = c[op.pick % c.length];
        return this.fenced(
          h,
          (f) => store.renewLease(f, op.leaseMs),
          () => model.renewLease(h.id, h.modelLeaseId, op.leaseMs),
        );
      }
      case 'stale': {
        const c = this.staleHeld();
        if (!c.length) return false;
        const h = c[op.pick % c.length];
        const before = comparable(model.get(h.id)!);
        const storeOp = (f: Fence): Promise<Task> => {
          switch (op.what) {
            case 'complete':
              return store.complete(f, { status: TaskStatus.SUCCEEDED });
            case 'retry':
              return store.retry(f, { delayMs: 0, error: 'stale' });
            case 'release':
              return store.release(f);
            case 'renew':
              return store.renewLease(f, 1000);
            case 'markSubmitted':
              return store.markSubmitted(f, { externalId: 'stale', status: TaskStatus.SUBMITTED, pollDelayMs: 0 });
          }
        };
        await this.fenced(h, storeOp, () => ({ ok: false, stale: true }));
        expect(comparable((await store.get(h.id))!)).toEqual(before);
        return true;
      }
      case 'cancel': {
        const ids = this.allIds();
        if (!ids.length) return false;
        const id = ids[op.pick % ids.length];
        const got = await store.cancel(id);
        const want = model.cancel(id);
        expect(got && comparable(got)).toEqual(want && comparable(want));
        return true;
      }
      case 'changePriority': {
        const ids = this.allIds();
        if (!ids.length) return false;
        const id = ids[op.pick % ids.length];
        const got = await outcome(store.changePriority(id, op.priority));
        const want = model.changePriority(id, op.priority);
        const kind = got.ok ? 'ok' : got.error instanceof InvalidStateError ? 'invalid' : got.error instanceof TaskNotFoundError ? 'notfound' : String(got.error);
        expect(kind).toBe(want);
        return true;
      }
      case 'setLimits': {
        const clean = Object.fromEntries(Object.entries(op.update).filter(([, v]) => v !== undefined)) as LimitUpdate;
        model.setLimits(clean);
        const snap = await store.setLimits(clean);
        expect(snap.concurrencyKeys).toEqual(model.limits.concurrencyKeys);
        expect(snap.tenants).toEqual(model.limits.tenants);
        expect(snap.defaultTenantQuota).toEqual(model.limits.defaultTenantQuota);
        return true;
      }
      case 'advance':
        this.clock.advance(op.ms);
        return false;
      case 'recover': {
        const got = await store.recoverExpired(10_000);
        const want = model.recoverExpired();
        const norm = (xs: Array<{ id: string; from: TaskStatus; to: TaskStatus }>) => xs.map((x) => `${x.id} ${x.from}->${x.to}`).sort();
        expect(norm(got.map((x) => ({ id: x.task.id, from: x.from, to: x.to })))).toEqual(norm(want));
        return true;
      }
      case 'purge': {
        const olderThan = this.clock.now() - op.ageMs;
        expect(await store.purge(olderThan, 10_000)).toBe(model.purge(olderThan, 10_000));
        return true;
      }
    }
  }

  async compareState(): Promise<void> {
    const counts = (await this.store.stats()).byStatus;
    const want = countStatuses(this.model.tasks);
    expect(Object.fromEntries(ALL_STATUSES.map((st) => [st, counts[st] ?? 0]))).toEqual(Object.fromEntries(ALL_STATUSES.map((st) => [st, want[st] ?? 0])));
    const nonEmpty = ALL_STATUSES.filter((st) => (want[st] ?? 0) > 0);
    await this.compareTasks(nonEmpty);
  }

  async compareTasks(statuses: readonly TaskStatus[] = ALL_STATUSES): Promise<void> {
    const got = (await storeSnapshot(this.store, statuses)).map(comparable).sort((a, b) => a.id.localeCompare(b.id));
    const want = this.model.tasks.map(comparable).sort((a, b) => a.id.localeCompare(b.id));
    expect(got).toEqual(want);
  }
}

function countStatuses(ts: readonly ModelTask[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of ts) out[t.status] = (out[t.status] ?? 0) + 1;
  return out;
}

export interface ModelBasedOptions {
  /** Runs without aging (default 30) and with aging (default 10). */
  numRuns?: number;
  agingRuns?: number;
  seed?: number;
  maxOps?: number;
}

export function describeModelBasedTest(factory: StoreFactory, options: ModelBasedOptions = {}): void {
  const seed = options.seed ?? 20240611;
  // every run starts with some limits and a backlog, then random ops
  const ops = fc
    .tuple(
      fc.array(limitArb, { minLength: 0, maxLength: 4 }),
      fc.array(taskSpecArb, { minLength: 5, maxLength: 25 }),
      fc.array(opArb, { minLength: 20, maxLength: options.maxOps ?? 80, size: 'max' }),
    )
    .map(([limits, backlog, rest]): Op[] => [
      ...limits.map((update): Op => ({ kind: 'setLimits', update })),
      { kind: 'submit', tasks: backlog },
      ...rest,
    ]);

  const property = (agingIntervalMs: number) =>
    fc.asyncProperty(ops, async (list) => {
      const clock = new ManualClock(T0);
      const store = await factory.create({ clock, agingIntervalMs: agingIntervalMs || undefined });
      try {
        await store.init();
        const run = new Run(store, clock, agingIntervalMs);
        for (const [i, op] of list.entries()) {
          try {
            if (await run.apply(op)) await run.compareState();
          } catch (e) {
            const msg = e instanceof Error ? e.message : String(e);
            throw new Error(`op #${i} ${JSON.stringify(op)} failed:\n${msg}`);
          }
        }
        if (process.env.PQ_MODEL_DEBUG) console.log(JSON.stringify({ ops: list.length, tasks: run.model.tasks.length, held: run.held.length, byStatus: countStatuses(run.model.tasks) }));
        await run.compareState();
        await run.compareTasks(ALL_STATUSES);
      } finally {
        await store.close();
      }
    });

  describe(`model-based: ${factory.name} behaves like the reference model`, () => {
    afterAll(async () => {
      await factory.teardown?.();
    });

    it('random op sequences without aging', async () => {
      await fc.assert(property(0), { seed, numRuns: options.numRuns ?? 30, endOnFailure: false });
    });

    it('random op sequences with aging (T = 1000 ms)', async () => {
      await fc.assert(property(1000), { seed: seed + 1, numRuns: options.agingRuns ?? 10 });
    });
  });
}
