/**
 * Replays one scheduling trace (trace-world.ts) through the PUBLIC API: TaskManager to submit,
 * cancel and re-prioritise, AdmissionGuard to change limits, and a real Worker (concurrency 1,
 * prefetch 0) whose handlers record every call. After every op the recorded handler calls and
 * the events must be what the reference model (test/model/reference-model.ts) predicts, and an
 * independent audit of the handlers' own records checks every limit at every start.
 *
 * Driving the worker: one op `step` = ticks; each tick is worker.tick() + whenIdle(), the claim
 * of a tick sees every outcome of the previous one written. The worker also claims on its own
 * once a handler returns (a soft wake, to overlap the next claim with the outcome's write); those
 * claims go through a gate that answers "nothing" between ticks, so the start order is decided
 * by the ticks alone and is exactly reproducible.
 */
import { AdmissionGuard, TaskManager } from 'nestjs-priority-queue';
import {
  effectiveAccountLimit,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
  IdempotencyConflictError,
  InvalidStateError,
  isInFlight,
  isTerminal,
  NotSubmittedError,
  PriorityQueue,
  TaskEvents,
  TaskNotFoundError,
  TaskStatus,
  TaskTypeRegistry,
  Worker,
  backoffDelay,
  type ManualClock,
  type NewTask,
  type SubmissionClaim,
  type SubmitInput,
  type Task,
  type TaskEvent,
  type TaskStore,
} from '../../libs/priority-queue/src/core';
import { completeThenClaim } from '../../libs/priority-queue/src/core/complete-and-claim';
import type { ClaimRequest, CompleteCall } from '../../libs/priority-queue/src/core/task-store.port';
import { ReferenceModel, type ModelTask } from '../model/reference-model';
import { listAll, taskView, taskViews } from '../model/task-view';
import { LEASE_MS, U, type Aim, type SubmitSpec, type TaskKind, type TraceOp } from './trace-world';

const TYPE_OPTIONS = {
  once: { maxAttempts: 3 },
  prov: { maxAttempts: 3, pollIntervalMs: U, maxPollIntervalMs: 8 * U },
  flaky: { maxAttempts: 3, backoff: { baseMs: U, maxMs: 8 * U } },
  blind: { maxAttempts: 3, idempotent: false, backoff: { baseMs: U, maxMs: 8 * U } },
} as const;
const RANDOM = () => 0.5;

interface Call {
  k: 'S' | 'P' | 'C';
  id: string;
}

interface Payload {
  n: number;
  fails: number;
  mode: SubmitSpec['mode'];
}

/** A TaskStore whose claims answer "nothing" while the gate is shut (see the header). */
function gated(store: TaskStore): { store: TaskStore; gate: { open: boolean } } {
  const gate = { open: false };
  const empty: SubmissionClaim = { claimed: [], timedOut: [], nextWakeAt: null };
  const proxy = new Proxy(store, {
    get(target, prop) {
      if (prop === 'claimSubmissions') return (req: never) => (gate.open ? target.claimSubmissions(req) : Promise.resolve(empty));
      if (prop === 'claimPolls') return (req: never) => (gate.open ? target.claimPolls(req) : Promise.resolve([]));
      // the worker's completes riding on a claim: written either way, the claim gated like the others
      if (prop === 'completeAndClaim' && target.completeAndClaim) {
        return (completes: readonly CompleteCall[], req: ClaimRequest) =>
          gate.open ? target.completeAndClaim!(completes, req) : completeThenClaim({ complete: (f, o) => target.complete(f, o), claimSubmissions: () => Promise.resolve(empty) }, completes, req);
      }
      if (prop === 'subscribe') return undefined;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: proxy, gate };
}

export interface TraceRunOptions {
  store: TaskStore;
  clock: ManualClock;
  agingIntervalMs: number;
}

export class TraceRun {
  readonly model: ReferenceModel;
  private readonly clock: ManualClock;
  private readonly store: TaskStore;
  private readonly manager: TaskManager;
  private readonly guard: AdmissionGuard;
  private readonly worker: Worker;
  private readonly gate: { open: boolean };
  private readonly errors: unknown[] = [];
  private calls: Call[] = [];
  private events: TaskEvent[] = [];
  /** Provider jobs the (simulated) provider has finished. */
  private readonly done = new Set<string>();
  /** Independent audit: provider jobs started and not ended, from the handlers' own calls. */
  private readonly audit = new Map<string, ModelTask>();
  readonly violations: string[] = [];
  private payloadN = 0;
  starts = 0;
  ticks = 0;

  constructor(opts: TraceRunOptions) {
    this.clock = opts.clock;
    this.store = opts.store;
    this.model = new ReferenceModel(opts.clock, opts.agingIntervalMs);
    const registry = new TaskTypeRegistry();
    const rec = (k: Call['k'], t: Task) => this.calls.push({ k, id: t.id });
    registry.register('once', TYPE_OPTIONS.once, { run: ({ task }) => (rec('S', task), { ok: 1 }) }, 'Once');
    registry.register(
      'prov',
      TYPE_OPTIONS.prov,
      {
        submit: ({ task }) => (rec('S', task), `x-${task.id}`),
        poll: ({ task }) => (rec('P', task), this.done.has(task.id) ? { done: true, result: { ok: 1 } } : { done: false, nextPollMs: U }),
        cancel: ({ task }) => void rec('C', task),
      },
      'Prov',
    );
    registry.register(
      'flaky',
      TYPE_OPTIONS.flaky,
      {
        run: ({ task }) => {
          rec('S', task);
          if (task.attempts < (task.payload as Payload).fails) throw new Error('flaky');
          return { ok: 1 };
        },
      },
      'Flaky',
    );
    registry.register(
      'blind',
      TYPE_OPTIONS.blind,
      {
        run: ({ task }) => {
          rec('S', task);
          const mode = (task.payload as Payload).mode;
          if (mode === 'never' && task.attempts === 0) throw new NotSubmittedError('busy', U);
          if (mode === 'unknown') throw new Error('socket hang up');
          return { ok: 1 };
        },
      },
      'Blind',
    );
    const events = new TaskEvents();
    events.on((e) => this.events.push(e));
    this.manager = new TaskManager(new PriorityQueue({ store: opts.store, registry, events }));
    this.guard = new AdmissionGuard(opts.store);
    const g = gated(opts.store);
    this.gate = g.gate;
    this.worker = new Worker({
      store: g.store,
      registry,
      events,
      owner: 'trace-worker',
      concurrency: 1,
      prefetch: 0,
      leaseMs: LEASE_MS,
      random: RANDOM,
      onError: (e) => this.errors.push(e),
    });
  }

  async close(): Promise<void> {
    await this.worker.stop();
  }

  /** Runs one op on the API and the model; throws at the first difference. */
  async apply(op: TraceOp): Promise<void> {
    const before = new Map(this.model.tasks.map((t) => [t.id, t.status]));
    this.events = [];
    switch (op.kind) {
      case 'submit':
        await this.submit(op.specs, op.many);
        break;
      case 'limit': {
        const snap = await this.guard.setLimits(op.update);
        this.model.setLimits(op.update);
        expect(snap).toEqual(this.model.limits);
        break;
      }
      case 'cancel': {
        const id = this.target(op.aim, op.pick);
        if (id === null) return;
        const got = await this.manager.cancel(id);
        const want = this.model.cancel(id)!;
        expect(taskView(got)).toEqual(taskView(want));
        break;
      }
      case 'changePriority': {
        const id = this.target(op.aim, op.pick);
        if (id === null) return;
        let got: string;
        try {
          expect((await this.manager.changePriority(id, op.priority)).priority).toBe(op.priority);
          got = 'ok';
        } catch (e) {
          got = e instanceof InvalidStateError ? 'invalid' : e instanceof TaskNotFoundError ? 'notfound' : String(e);
        }
        expect(got).toBe(this.model.changePriority(id, op.priority));
        break;
      }
      case 'finish': {
        const open = this.model.tasks.filter((t) => t.type === 'prov' && isInFlight(t.status) && !this.done.has(t.id));
        for (let i = 0; i < Math.min(op.count, open.length); i++) this.done.add(open[(op.pick + i * 7919) % open.length].id);
        return;
      }
      case 'advance':
        this.clock.advance(op.units * U);
        await this.sweep();
        break;
      case 'step':
        for (let i = 0; i < op.ticks; i++) if (!(await this.tick())) break;
        break;
    }
    this.checkEvents(before);
    expect(this.errors).toEqual([]);
  }

  /** One worker tick against the model's prediction; false when nothing happened. */
  async tick(): Promise<boolean> {
    this.ticks++;
    this.calls = [];
    const eventsBefore = this.events.length;
    this.gate.open = true;
    try {
      await this.worker.tick();
    } finally {
      this.gate.open = false;
    }
    await this.worker.whenIdle();
    const calls = this.calls;
    const involved = new Set(calls.map((c) => c.id));
    try {
      return this.predictTick(calls, eventsBefore, involved);
    } catch (e) {
      // what the store and the model hold for every task involved, and what the worker reported
      const lines: string[] = [];
      for (const id of involved) {
        const st = await this.store.get(id);
        lines.push(`model ${JSON.stringify(this.model.get(id) && taskView(this.model.get(id)!))}`, `store ${JSON.stringify(st && taskView(st))}`);
      }
      const errs = this.errors.map((x) => String(x));
      throw new Error(`${e instanceof Error ? e.message : String(e)}\nnow ${this.clock.now()}, calls ${JSON.stringify(calls)}\n${lines.join('\n')}\nworker errors: ${JSON.stringify(errs)}`);
    }
  }

  private predictTick(calls: Call[], eventsBefore: number, involved: Set<string>): boolean {
    const now = this.clock.now();
    const m = this.model;
    const due = m.tasks.filter(
      (t) =>
        (t.status === TaskStatus.SUBMITTED || t.status === TaskStatus.RUNNING) &&
        ((t.nextPollAt !== null && t.nextPollAt <= now) || t.cancelRequested) &&
        (t.leaseUntil === null || t.leaseUntil <= now),
    );
    for (const d of due) involved.add(d.id);
    if (due.length > 0) {
      // one poll; which of the due ones is the store's choice (earliest nextPollAt first)
      expect(calls).toHaveLength(1);
      const t = m.get(calls[0].id)!;
      expect(due.map((d) => d.id)).toContain(t.id);
      const earliest = Math.min(...due.filter((d) => d.nextPollAt !== null && d.nextPollAt <= now).map((d) => d.nextPollAt!));
      if (!t.cancelRequested) expect(t.nextPollAt).toBe(earliest);
      Object.assign(t, { leaseOwner: this.worker.owner, leaseId: 'poll', leaseUntil: now + LEASE_MS });
      if (t.deadlineAt !== null && t.deadlineAt <= now) {
        expect(calls).toEqual([{ k: 'C', id: t.id }]);
        m.complete(t.id, 'poll', TaskStatus.TIMED_OUT, null, 'deadline passed');
        this.audit.delete(t.id);
      } else if (t.cancelRequested) {
        expect(calls).toEqual([{ k: 'C', id: t.id }]);
        m.complete(t.id, 'poll', TaskStatus.CANCELED, null, 'canceled');
        this.audit.delete(t.id);
      } else {
        expect(calls).toEqual([{ k: 'P', id: t.id }]);
        if (this.done.has(t.id)) {
          m.complete(t.id, 'poll', TaskStatus.SUCCEEDED, { ok: 1 }, null);
          this.audit.delete(t.id);
        } else m.recordPoll(t.id, 'poll', TaskStatus.RUNNING, U, 0);
      }
      return true;
    }
    const { claimed } = m.claimSubmissions(1, LEASE_MS, this.worker.owner);
    for (const c of claimed) involved.add(c.id);
    expect(calls).toEqual(claimed.map((t) => ({ k: 'S', id: t.id })));
    for (const c of claimed) this.started(c);
    return claimed.length > 0 || this.events.length > eventsBefore;
  }

  /** The model's side of a handler the worker started, and the audit of its limits. */
  private started(c: ModelTask): void {
    this.starts++;
    this.auditStart(c);
    const m = this.model;
    const lease = c.leaseId!;
    const p = c.payload as Payload;
    const failed = (idempotent: boolean, neverSeen: boolean, retryAfter: number | null, error: string) => {
      if (!idempotent && !neverSeen) m.complete(c.id, lease, TaskStatus.SUBMIT_UNKNOWN, null, error);
      else if (c.attempts + 1 >= c.maxAttempts) m.complete(c.id, lease, TaskStatus.FAILED, null, error);
      else m.retry(c.id, lease, retryAfter ?? backoffDelay(c.attempts + 1, U, 8 * U, RANDOM), error);
    };
    switch (c.type as TaskKind) {
      case 'once':
        m.complete(c.id, lease, TaskStatus.SUCCEEDED, { ok: 1 }, null);
        return;
      case 'prov':
        m.markSubmitted(c.id, lease, `x-${c.id}`, TaskStatus.SUBMITTED, U);
        this.audit.set(c.id, c);
        return;
      case 'flaky':
        if (c.attempts < p.fails) failed(true, false, null, 'flaky');
        else m.complete(c.id, lease, TaskStatus.SUCCEEDED, { ok: 1 }, null);
        return;
      case 'blind':
        if (p.mode === 'never' && c.attempts === 0) failed(false, true, U, 'busy');
        else if (p.mode === 'unknown') failed(false, false, null, 'socket hang up');
        else m.complete(c.id, lease, TaskStatus.SUCCEEDED, { ok: 1 }, null);
        return;
    }
  }

  /** Every limit at the start of `c`, from the jobs the handlers know to be running. */
  private auditStart(c: ModelTask): void {
    const l = this.model.limits;
    const running = [...this.audit.values()];
    const say = (what: string) => this.violations.push(`${c.id} started with ${what}`);
    if (l.providers[c.providerKey]?.paused) say(`provider ${c.providerKey} paused`);
    if (c.accountId !== null) {
      const lim = effectiveAccountLimit(l, c.providerKey, c.accountId);
      const n = running.filter((t) => t.providerKey === c.providerKey && t.accountId === c.accountId).length;
      if (lim !== null && n >= lim) say(`account ${c.providerKey}/${c.accountId} at ${n} of ${lim}`);
    }
    if (c.tenantId !== null) {
      const lim = effectiveTenantQuota(l, c.tenantId);
      const n = running.filter((t) => t.tenantId === c.tenantId).length;
      if (lim !== null && n >= lim) say(`tenant ${c.tenantId} at ${n} of ${lim}`);
    }
    if (c.concurrencyKey !== null) {
      const lim = effectiveConcurrencyKeyLimit(l, c.concurrencyKey);
      const n = running.filter((t) => t.concurrencyKey === c.concurrencyKey).length;
      if (n >= lim) say(`key ${c.concurrencyKey} at ${n} of ${lim}`);
    }
  }

  private async sweep(): Promise<void> {
    this.calls = [];
    let n: number;
    do n = await this.worker.sweep();
    while (n >= 1000);
    await this.worker.whenIdle();
    const recovered = this.model.recoverExpired();
    // the sweep calls the cancel hook of every provider task it timed out between polls
    const cancels = recovered.filter((x) => x.to === TaskStatus.TIMED_OUT && (x.from === TaskStatus.SUBMITTED || x.from === TaskStatus.RUNNING));
    expect(this.calls.map((c) => `${c.k} ${c.id}`).sort()).toEqual(cancels.map((x) => `C ${x.id}`).sort());
    for (const x of cancels) this.audit.delete(x.id);
  }

  private async submit(specs: readonly SubmitSpec[], many: boolean): Promise<void> {
    const inputs: SubmitInput[] = specs.map((s) => {
      const holder = s.idem === null ? undefined : this.model.tasks.find((t) => t.idempotencyKey === `i${s.idem}`);
      const input: SubmitInput = {
        type: s.type,
        payload: { n: ++this.payloadN, fails: s.fails, mode: s.mode } satisfies Payload,
        priority: s.priority,
        providerKey: s.providerKey,
        delayMs: s.delayMs,
        timeoutMs: s.timeoutMs,
        ...(s.accountId !== null && { accountId: s.accountId }),
        ...(s.tenantId !== null && { tenantId: s.tenantId }),
        ...(s.concurrencyKey !== null && { concurrencyKey: s.concurrencyKey }),
        ...(s.idem !== null && { idempotencyKey: `i${s.idem}` }),
      };
      if (holder && s.sameAsHolder) {
        Object.assign(input, { type: holder.type, payload: holder.payload });
        if (holder.tenantId === null) delete input.tenantId;
        else input.tenantId = holder.tenantId;
      }
      return input;
    });
    let got: Task[] | 'conflict';
    try {
      got = many ? await this.manager.submitMany(inputs) : [await this.manager.submit(inputs[0])];
    } catch (e) {
      if (!(e instanceof IdempotencyConflictError)) throw e;
      got = 'conflict';
    }
    const news: NewTask[] = inputs.map((input, i) => ({
      id: got === 'conflict' ? `conflict-${i}` : got[i].id,
      idempotencyKey: input.idempotencyKey ?? null,
      type: input.type,
      payload: input.payload,
      priority: input.priority!,
      providerKey: input.providerKey!,
      accountId: input.accountId ?? null,
      tenantId: input.tenantId ?? null,
      concurrencyKey: input.concurrencyKey ?? null,
      delayMs: input.delayMs!,
      timeoutMs: input.timeoutMs ?? null,
      maxAttempts: TYPE_OPTIONS[input.type as TaskKind].maxAttempts,
      idempotent: input.type !== 'blind',
    }));
    const known = new Set(this.model.tasks.map((t) => t.id));
    const want = this.model.create(news);
    if (want === 'conflict' || got === 'conflict') {
      expect(got).toBe(want);
      return;
    }
    expect(got.map((t) => t.id)).toEqual(want.map((w) => w.id));
    for (const w of want) if (w.created) expect(known.has(w.id)).toBe(false);
  }

  /** A task id for cancel / changePriority, or null when there is none of that kind. */
  private target(aim: Aim, pick: number): string | null {
    const ts = this.model.tasks;
    let pool: ModelTask[];
    if (aim === 'head') {
      // the best pending task per lane: what a claim looks at first
      const heads = new Map<string, ModelTask>();
      const pending = ts.filter((t) => t.status === TaskStatus.PENDING_SUBMIT);
      const order = [...pending].sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || a.seq - b.seq);
      for (const t of order) {
        const lane = JSON.stringify([t.providerKey, t.accountId, t.tenantId, t.concurrencyKey]);
        if (!heads.has(lane)) heads.set(lane, t);
      }
      pool = [...heads.values()];
    } else if (aim === 'pending') pool = ts.filter((t) => t.status === TaskStatus.PENDING_SUBMIT);
    else if (aim === 'inflight') pool = ts.filter((t) => isInFlight(t.status));
    else pool = ts;
    return pool.length ? pool[pick % pool.length].id : null;
  }

  /** Events of the op: per task, a linked chain from the model's status before to its status after. */
  private checkEvents(before: Map<string, TaskStatus>): void {
    const chains = new Map<string, TaskEvent[]>();
    for (const e of this.events) chains.set(e.taskId, [...(chains.get(e.taskId) ?? []), e]);
    for (const t of this.model.tasks) {
      const from = before.get(t.id) ?? null;
      const chain = (chains.get(t.id) ?? []).map((e) => `${e.from}->${e.to}`);
      chains.delete(t.id);
      if (chain.length === 0 && from === t.status) continue;
      const linked = chain.length > 0 && chain.every((c, i) => i === 0 || c.split('->')[0] === chain[i - 1].split('->')[1]);
      if (!linked || !chain[0].startsWith(`${from}->`) || !chain[chain.length - 1].endsWith(`->${t.status}`)) {
        throw new Error(`events of ${t.id}: ${chain.join(', ') || 'none'}; the model went ${from} -> ${t.status}`);
      }
    }
    expect([...chains.keys()]).toEqual([]);
  }

  /** Every task and the in-flight counts of stats(), against the model. */
  async compareState(): Promise<void> {
    const got = await listAll((status, limit, afterSeq) => this.manager.list(status, limit, afterSeq));
    expect(taskViews(got)).toEqual(taskViews(this.model.tasks));
    const stats = await this.manager.stats();
    const live = this.model.tasks.filter((t) => isInFlight(t.status));
    const count = (key: (t: ModelTask) => string | null) => {
      const out: Record<string, number> = {};
      for (const t of live) {
        const k = key(t);
        if (k !== null) out[k] = (out[k] ?? 0) + 1;
      }
      return out;
    };
    expect(stats.inFlightByProvider).toEqual(count((t) => t.providerKey));
    expect(stats.inFlightByTenant).toEqual(count((t) => t.tenantId));
    expect(stats.inFlightByConcurrencyKey).toEqual(count((t) => t.concurrencyKey));
    const accounts = count((t) => (t.accountId === null ? null : JSON.stringify([t.providerKey, t.accountId])));
    expect(stats.inFlightByAccount.map((a) => [JSON.stringify([a.providerKey, a.accountId]), a.count]).sort()).toEqual(Object.entries(accounts).sort());
  }

  /** Every limit off, every provider job done, time past every delay: the worker drains it all. */
  async drain(): Promise<void> {
    const keys = (f: (t: ModelTask) => string | null) => [...new Set(this.model.tasks.map(f).filter((k): k is string => k !== null))];
    for (const p of keys((t) => t.providerKey)) {
      await this.apply({ kind: 'limit', update: { kind: 'provider', providerKey: p, paused: false, qps: null, accountConcurrency: null } });
    }
    for (const a of Object.values(this.model.limits.accounts)) {
      await this.apply({ kind: 'limit', update: { kind: 'account', providerKey: a.providerKey, accountId: a.accountId, concurrency: null } });
    }
    for (const t of Object.keys(this.model.limits.tenants)) await this.apply({ kind: 'limit', update: { kind: 'tenant', tenantId: t, quota: null } });
    await this.apply({ kind: 'limit', update: { kind: 'defaultTenant', quota: null } });
    for (const k of keys((t) => t.concurrencyKey)) await this.apply({ kind: 'limit', update: { kind: 'concurrencyKey', key: k, limit: 100_000 } });
    for (const t of this.model.tasks) if (t.type === 'prov') this.done.add(t.id);
    for (let round = 0; round < 4; round++) {
      await this.apply({ kind: 'advance', units: 20 });
      while (this.model.tasks.some((t) => !isTerminal(t.status))) {
        this.events = [];
        const before = new Map(this.model.tasks.map((t) => [t.id, t.status]));
        const moved = await this.tick();
        this.checkEvents(before);
        if (!moved) break;
      }
    }
    expect(this.errors).toEqual([]);
    expect(this.model.tasks.filter((t) => !isTerminal(t.status)).map((t) => `${t.id} ${t.status}`)).toEqual([]);
    expect([...this.audit.keys()]).toEqual([]);
    await this.compareState();
  }
}
