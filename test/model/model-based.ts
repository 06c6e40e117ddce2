/**
 * Model-based test (fast-check): random op lists run against a store and the ReferenceModel;
 * claimed id sequences (in claim order), poll claims, fenced-write outcomes (ok / StaleLeaseError),
 * cancel / changePriority outcomes, recovery transitions, purge counts and every task's state
 * must be identical (the state after every op, or every `compareEvery` ops in a wide world).
 *
 * Usage: describeModelBasedTest(factory, options) with the StoreFactory of test/contract. Each
 * store runs the NARROW world (few lanes, without and with aging) and the WIDE world (hundreds
 * of lanes, claims of 1 to 40), see model-world.ts; options.*Runs sizes each to the store's speed.
 *
 * Seeds: every run of the suite draws a new base seed (test i of a spec uses base + i), so each
 * run explores new sequences. A failure's message starts with the line that replays it:
 *
 *   PQ_MODEL_SEED=<base> PQ_MODEL_PATH=<path> npx jest <spec file> -t '<test name>'
 *
 * PQ_MODEL_SEED alone reruns every test of a spec on that base seed; PQ_MODEL_PATH (with -t, it
 * belongs to one test) goes straight to the shrunk counterexample. The base seed is also printed
 * (console.error) as soon as a first failure is seen, and shrinking stops after SHRINK_BUDGET_MS
 * (later candidates are skipped): the smallest failing sequence found by then is reported.
 * A spec may pin `options.seed`; PQ_MODEL_SEED still wins.
 *
 * Not modelled on purpose: deadlines (the interplay "expired submit lease AND past deadline"
 * is left open by the port; the contract suite covers deadlines), versions, nextWakeAt.
 *
 * DESIGN §7 on the stores whose `policies` implement it (StoreFactory.policies): deadline boosts
 * ride in every world's task specs (the claim's `boosted` and each task's fairTag / boostAt /
 * boostPriority are compared too), fair share runs as worlds of its own (narrow and wide, with
 * tenant weights among the limit updates). A store without them gets one test instead that asks
 * for them and expects NotSupportedByStoreError: nothing is skipped.
 */
import fc from 'fast-check';
import {
  ALL_STATUSES,
  ManualClock,
  StaleLeaseError,
  IdempotencyConflictError,
  InvalidStateError,
  NotSupportedByStoreError,
  TaskNotFoundError,
  TaskStatus,
  type Fence,
  type SubmissionClaim,
  type LimitUpdate,
  type NewTask,
  type Task,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import type { StoreFactory } from '../contract/task-store.contract';
import { T0 } from '../contract/harness';
import { BOOST_TIMEOUT_MS, NARROW, runArb, WIDE, type Aim, type ModelWorld, type Op, type Policies } from './model-world';
import { ReferenceModel, referenceOrder, type FencedResult, type ModelTask } from './reference-model';
import { listAll, taskView, taskViews } from './task-view';

/** Shrinking time after the first failure (each candidate replays a whole sequence on the store). */
const SHRINK_BUDGET_MS = 60_000;

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
    fairness: boolean,
  ) {
    this.model = new ReferenceModel(clock, agingIntervalMs, fairness);
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
      expect(taskView(got.value)).toEqual(taskView(want.task));
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

  /** A claim's answer against the model's claim of the same request (claimed in order, timed out, boosted). */
  private claimed(res: SubmissionClaim, limit: number, leaseMs: number): void {
    const model = this.model;
    const want = model.claimSubmissions(limit, leaseMs, 'w');
    expect((res.boosted ?? []).map((b) => [b.task.id, b.fromPriority, b.task.priority])).toEqual(want.boosted.map((b) => [b.id, b.fromPriority, model.get(b.id)!.priority]));
    expect(res.claimed.map((t) => t.id)).toEqual(want.claimed.map((t) => t.id));
    expect(res.timedOut.map((t) => t.id).sort()).toEqual(want.timedOut.map((t) => t.id).sort());
    this.remember(res.claimed, want.claimed);
  }

  /** 'any': any task the model knows; 'top': one of the 8 best due pending tasks (lane heads), else any. */
  private pickId(pick: number, aim: Aim): string | undefined {
    if (aim === 'top') {
      const now = this.clock.now();
      const top = this.model.tasks
        .filter((t) => t.status === TaskStatus.PENDING_SUBMIT && t.runAt <= now)
        .sort((a, b) => referenceOrder(a, b, this.model.agingIntervalMs))
        .slice(0, 8);
      if (top.length > 0) return top[pick % top.length].id;
    }
    const ids = this.model.tasks.map((t) => t.id);
    return ids.length > 0 ? ids[pick % ids.length] : undefined;
  }

  /** Runs one op on both; false when it was a no-op (nothing to compare afterwards). */
  async apply(op: Op): Promise<boolean> {
    const { store, model } = this;
    switch (op.kind) {
      case 'submit': {
        // skewed: created with the clock set back (as by a producer whose clock is behind), each
        // delay longer by the skew, so no task is due before the clock is back
        const now = this.clock.now();
        const news: NewTask[] = op.tasks.map((s) => ({
          ...s,
          delayMs: s.delayMs + op.skewMs,
          id: nextId(),
          type: 'job',
          payload: { s: s.priority },
          timeoutMs: s.boost === null ? null : BOOST_TIMEOUT_MS,
          boost: s.boost === null ? null : { beforeDeadlineMs: BOOST_TIMEOUT_MS - s.boost.boostInMs, priority: s.boost.priority },
        }));
        // a reused key mostly resubmits its task (tenant, payload as held; created = false); with
        // maxAttempts 1 the input keeps its own, a conflict when they differ (nothing is created)
        const firsts = new Map<string, NewTask>();
        for (const n of news) {
          const k = n.idempotencyKey;
          const held = k === null ? undefined : (firsts.get(k) ?? model.tasks.find((t) => t.idempotencyKey === k));
          if (k !== null && !held) firsts.set(k, n);
          else if (held && n.maxAttempts !== 1) Object.assign(n, { tenantId: held.tenantId, payload: held.payload });
        }
        this.clock.set(now - op.skewMs);
        try {
          const res = await outcome(store.create(news));
          const want = model.create(news);
          if (want === 'conflict') expect(res.ok ? 'created' : res.error).toBeInstanceOf(IdempotencyConflictError);
          else if (!res.ok) throw res.error;
          else expect(res.value.map((r) => ({ id: r.task.id, created: r.created }))).toEqual(want);
        } finally {
          this.clock.set(now);
        }
        return true;
      }
      case 'claim': {
        const res = await store.claimSubmissions({ owner: 'w', limit: op.limit, leaseMs: op.leaseMs });
        this.claimed(res, op.limit, op.leaseMs);
        return true;
      }
      case 'completeAndClaim': {
        // distinct held tasks, then maybe one whose lease was lost since (refused alone), then the claim
        const valid = this.validHeld([TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING]);
        const calls = [...new Set(valid.length ? op.picks.map((p) => valid[p % valid.length]) : [])];
        const stale = this.staleHeld().filter((h) => !calls.some((c) => c.id === h.id));
        const lost = op.stale !== null && stale.length > 0 ? stale[op.stale % stale.length] : null;
        if (lost) calls.push(lost);
        const error = op.status === TaskStatus.SUCCEEDED ? null : 'no';
        const outcome = { status: op.status, result: { done: 1 }, error, remove: op.remove ? ({ now: true } as const) : null };
        const fences = [];
        for (const h of calls) fences.push(await this.fence(h));
        if (!store.completeAndClaim) throw new Error('the store has no completeAndClaim');
        const res = await store.completeAndClaim(fences.map((fence) => ({ fence, outcome })), { owner: 'w', limit: op.limit, leaseMs: op.leaseMs });
        expect(res.completed.length).toBe(calls.length);
        calls.forEach((h, i) => {
          const got = res.completed[i];
          const want = h === lost ? ({ ok: false, stale: true } as const) : model.complete(h.id, h.modelLeaseId, op.status, { done: 1 }, error, op.remove);
          if (want.ok) {
            if (got.error) throw new Error(`store rejected a valid complete on ${h.id} in completeAndClaim: ${String(got.error)}`);
            expect(taskView(got.task)).toEqual(taskView(want.task));
          } else {
            expect(got.error ?? 'resolved').toBeInstanceOf(StaleLeaseError);
          }
        });
        this.claimed(res.claim, op.limit, op.leaseMs);
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
          (f) => store.complete(f, { status: op.status, result: { done: 1 }, error, remove: op.remove ? { now: true } : null }),
          () => model.complete(h.id, h.modelLeaseId, op.status, { done: 1 }, error, op.remove),
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
        const before = taskView(model.get(h.id)!);
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
        expect(taskView((await store.get(h.id))!)).toEqual(before);
        return true;
      }
      case 'cancel': {
        const id = this.pickId(op.pick, op.aim);
        if (id === undefined) return false;
        const got = await store.cancel(id);
        const want = model.cancel(id);
        expect(got && taskView(got)).toEqual(want && taskView(want));
        return true;
      }
      case 'changePriority': {
        const id = this.pickId(op.pick, op.aim);
        if (id === undefined) return false;
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
      case 'requeue': {
        // retry of a finished task (TaskStore.requeue): any task, so refusals are compared too
        const id = this.pickId(op.pick, 'any');
        if (id === undefined) return false;
        const got = await outcome(store.requeue(id));
        const want = model.requeue(id);
        const kind = got.ok ? 'ok' : got.error instanceof InvalidStateError ? 'invalid' : got.error instanceof TaskNotFoundError ? 'notfound' : String(got.error);
        expect(kind).toBe(want);
        if (got.ok) expect(taskView(got.value.task)).toEqual(taskView(model.get(id)!));
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
    // statuses that stats() reports empty are not listed (saves round trips)
    const got = await listAll((status, limit, afterSeq) => this.store.list({ status, limit, afterSeq }), statuses, 500);
    expect(taskViews(got)).toEqual(taskViews(this.model.tasks));
  }
}

function countStatuses(ts: readonly ModelTask[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of ts) out[t.status] = (out[t.status] ?? 0) + 1;
  return out;
}

export interface ModelBasedOptions {
  /** Runs of the narrow world without aging (default 30), with aging (default 10), of the wide world (default 10). */
  numRuns?: number;
  agingRuns?: number;
  wideRuns?: number;
  /** Runs with fair share, narrow (default 15) and wide (default 5); stores with fairness only. */
  fairRuns?: number;
  wideFairRuns?: number;
  /** Pins the base seed (PQ_MODEL_SEED still wins); default: a new one every run. */
  seed?: number;
  /** Ops of a narrow run, at most. */
  maxOps?: number;
}

/** The base seed of this process: PQ_MODEL_SEED, else the spec's pinned one, else new. */
function baseSeed(pinned: number | undefined): number {
  const env = process.env.PQ_MODEL_SEED;
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (!Number.isSafeInteger(n)) throw new Error(`PQ_MODEL_SEED must be an integer, got ${JSON.stringify(env)}`);
    return n;
  }
  return pinned ?? Math.floor(Math.random() * 2 ** 31);
}

export function describeModelBasedTest(factory: StoreFactory, options: ModelBasedOptions = {}): void {
  const seed = baseSeed(options.seed);

  const supported: Policies = { fairness: factory.policies?.fairness === true, boost: factory.policies?.boost === true };

  /** Runs one op list on a fresh store and the model. */
  async function runOps(list: Op[], world: ModelWorld, agingIntervalMs: number, fairness: boolean): Promise<void> {
    const clock = new ManualClock(T0);
    const store = await factory.create({ clock, agingIntervalMs: agingIntervalMs || undefined, fairness: fairness ? 'tenant' : undefined });
    try {
      await store.init();
      const run = new Run(store, clock, agingIntervalMs, fairness);
      let applied = 0;
      for (const [i, op] of list.entries()) {
        try {
          if ((await run.apply(op)) && ++applied % world.compareEvery === 0) await run.compareState();
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          throw new Error(`op #${i} ${JSON.stringify(op)} failed:\n${msg}`);
        }
      }
      if (process.env.PQ_MODEL_DEBUG) console.log(JSON.stringify({ world: world.name, ops: list.length, tasks: run.model.tasks.length, held: run.held.length, byStatus: countStatuses(run.model.tasks) }));
      await run.compareState();
      await run.compareTasks(ALL_STATUSES);
    } finally {
      await store.close();
    }
  }

  /** fc.check of one test; a failure is thrown with the line that replays it first. */
  async function check(offset: number, world: ModelWorld, agingIntervalMs: number, numRuns: number, fairness = false): Promise<void> {
    const testSeed = seed + offset;
    const replay = () => {
      const { testPath, currentTestName } = expect.getState();
      return `PQ_MODEL_SEED=${seed} npx jest ${testPath ?? ''} -t ${JSON.stringify(currentTestName ?? '')}`;
    };
    let firstFailureAt: number | null = null;
    const w = world === NARROW && options.maxOps ? { ...world, maxOps: options.maxOps } : world;
    const property = fc.asyncProperty(runArb(w, { fairness, boost: supported.boost }), async (list) => {
      if (firstFailureAt !== null && Date.now() - firstFailureAt > SHRINK_BUDGET_MS) return; // shrink budget spent
      try {
        await runOps(list, world, agingIntervalMs, fairness);
      } catch (e) {
        if (firstFailureAt === null) {
          firstFailureAt = Date.now();
          console.error(`model-based ${factory.name}: a run failed; replay: ${replay()}`);
        }
        throw e;
      }
    });
    // a given path replays that counterexample as it is (no shrinking again)
    const path = process.env.PQ_MODEL_PATH || undefined;
    const details = await fc.check(property, { seed: testSeed, numRuns, path, endOnFailure: path !== undefined });
    if (details.failed) {
      const where = details.counterexamplePath ? ` PQ_MODEL_PATH=${details.counterexamplePath}` : '';
      const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(`replay: ${replay().replace(/^PQ_MODEL_SEED=\S+/, (m) => m + where)}\n${error}\n\n${fc.defaultReportMessage(details)}`);
    }
  }

  // generous: a failing run also shrinks (SHRINK_BUDGET_MS); a passing one takes what it takes
  const TIMEOUT = 600_000;

  describe(`model-based: ${factory.name} behaves like the reference model`, () => {
    afterAll(async () => {
      await factory.teardown?.();
    });

    it('random op sequences without aging', () => check(0, NARROW, 0, options.numRuns ?? 30), TIMEOUT);

    it('random op sequences with aging (T = 1000 ms)', () => check(1, NARROW, 1000, options.agingRuns ?? 10), TIMEOUT);

    it('wide world: hundreds of lanes, long sequences, claims of 1 to 40', () => check(2, WIDE, 0, options.wideRuns ?? 10), TIMEOUT);

    if (supported.fairness) {
      it("random op sequences with fair share (fairness: 'tenant', tenant weights)", () => check(3, NARROW, 0, options.fairRuns ?? 15, true), TIMEOUT);

      it('wide world with fair share', () => check(4, WIDE, 0, options.wideFairRuns ?? 5, true), TIMEOUT);
    }

    if (!supported.fairness || !supported.boost) {
      it('DESIGN §7 policies this store does not implement yet are refused with NotSupportedByStoreError', async () => {
        const clock = new ManualClock(T0);
        if (!supported.fairness) await expect(factory.create({ clock, fairness: 'tenant' })).rejects.toBeInstanceOf(NotSupportedByStoreError);
        if (!supported.boost) {
          const store = await factory.create({ clock });
          try {
            await store.init();
            const boosted: NewTask = { id: nextId(), idempotencyKey: null, type: 'job', payload: null, priority: 0, providerKey: 'p', accountId: null, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: 5000, boost: { beforeDeadlineMs: 1000, priority: 5 }, maxAttempts: 1, idempotent: true };
            await expect(store.create([boosted])).rejects.toBeInstanceOf(NotSupportedByStoreError);
            expect((await store.stats()).byStatus.PENDING_SUBMIT).toBe(0);
          } finally {
            await store.close();
          }
        }
      });
    }
  });
}
