/**
 * A plain, obviously-correct reference of the TaskStore semantics (DESIGN §2–§4, the port's doc
 * comments), for the model-based test. No indexes, no lanes: every task sits in one array and a
 * claim sorts every due candidate (referenceOrder) and scans for the first admissible one,
 * once per batch item. Slots are counted from statuses, the rate with the same gcra() helper.
 *
 * Lease ids are the model's own ("m1", "m2", ...); the driver maps them to the store's.
 * Versions are not modelled (their exact bumps are not the subject here).
 *
 * DESIGN §7, written out again as plainly (independent of core/fairness.ts and core/boost.ts):
 * with `fairness`, a virtual time per level and a finish tag per (tenant, level), 0 when absent,
 * as bigints; a create tags (weight from the limits at that moment), a claim advances the level's
 * virtual time, a priority change to another level re-tags. Deadline boosts: every claim first
 * fires each unfired boost whose time has come, by (boostAt, seq); a pending task below the boost
 * priority takes it (re-tagged); a changePriority at or after boostAt fires its boost unused.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  accountKey,
  effectiveAccountLimit,
  effectiveBurst,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
  emptyLimits,
  emptyProviderLimits,
  gcra,
  isInFlight,
  isRetryable,
  isTerminal,
  requeuedDeadline,
  TaskStatus,
  type LimitUpdate,
  type LimitsSnapshot,
  type NewTask,
  type Task,
  type TerminalStatus,
} from '../../libs/priority-queue/src/core';

export type ModelTask = Omit<Task, 'version' | 'updatedAt'>;

/**
 * DESIGN §2 written out again, independent of core/order-key.ts (a bug there would otherwise be
 * the model's too): with aging T, runAt - priority * T ascending (exact, as a bigint); then
 * priority descending, runAt, createdAt and seq ascending.
 */
export function referenceOrder(a: ModelTask, b: ModelTask, agingIntervalMs: number): number {
  return compareKeys(referenceKey(a, agingIntervalMs), referenceKey(b, agingIntervalMs));
}

/** The sort key of referenceOrder (computed once per task when a claim sorts its candidates). */
function referenceKey(t: ModelTask, agingIntervalMs: number): bigint[] {
  return [
    agingIntervalMs > 0 ? BigInt(t.runAt) - BigInt(t.priority) * BigInt(agingIntervalMs) : 0n,
    -BigInt(t.priority),
    t.fairTag === null ? 0n : BigInt(t.fairTag),
    BigInt(t.runAt),
    BigInt(t.createdAt),
    BigInt(t.seq),
  ];
}

function compareKeys(ka: bigint[], kb: bigint[]): number {
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
  return 0;
}

export type FencedResult = { ok: true; task: ModelTask } | { ok: false; stale: true };

export class ReferenceModel {
  readonly tasks: ModelTask[] = [];
  limits: LimitsSnapshot = emptyLimits();
  /** V[p] and F[tenant, p] of DESIGN §7 (fairness only); absent = 0. */
  private readonly virtualTime = new Map<number, bigint>();
  private readonly finishTag = new Map<string, bigint>();
  /** Ids of the tasks whose boost has not fired yet. */
  private readonly unfired = new Set<string>();
  /** GCRA theoretical arrival time per provider; kept across limit changes (like the stores). */
  private readonly tat = new Map<string, number>();
  private seq = 0;
  private leaseSeq = 0;

  constructor(
    private readonly clock: { now(): number },
    readonly agingIntervalMs = 0,
    readonly fairness = false,
  ) {}

  /** DESIGN §7: F[t,p] = max(F[t,p], V[p]) + floor(1e6 / w), the tag; w from the limits now. */
  private tag(t: ModelTask): void {
    if (!this.fairness) return;
    const key = JSON.stringify([t.tenantId, t.priority]);
    const w = (t.tenantId === null ? undefined : this.limits.tenantWeights[t.tenantId]) ?? 1;
    const f = this.finishTag.get(key) ?? 0n;
    const v = this.virtualTime.get(t.priority) ?? 0n;
    const tag = (f > v ? f : v) + BigInt(Math.floor(1_000_000 / w));
    this.finishTag.set(key, tag);
    t.fairTag = tag.toString();
  }

  /** A pending task takes another priority: re-tagged at the new level when it changed. */
  private setPriority(t: ModelTask, priority: number): void {
    const moved = t.priority !== priority;
    t.priority = priority;
    if (moved) this.tag(t);
  }

  /** Fires every due boost, by (boostAt, seq); returns the tasks they raised with the priority before. */
  private fireBoosts(): Array<{ id: string; fromPriority: number }> {
    const now = this.now;
    const due = this.tasks
      .filter((t) => this.unfired.has(t.id) && t.boostAt! <= now)
      .sort((a, b) => a.boostAt! - b.boostAt! || a.seq - b.seq);
    const out: Array<{ id: string; fromPriority: number }> = [];
    for (const t of due) {
      this.unfired.delete(t.id);
      if (t.status !== TaskStatus.PENDING_SUBMIT || t.priority >= t.boostPriority!) continue;
      out.push({ id: t.id, fromPriority: t.priority });
      this.setPriority(t, t.boostPriority!);
    }
    return out;
  }

  get now(): number {
    return this.clock.now();
  }

  get(id: string): ModelTask | undefined {
    return this.tasks.find((t) => t.id === id);
  }

  /**
   * 'conflict' (nothing created) when a key is reused with another type, tenant or payload
   * (compared as values: key order aside) than the task holding it or the batch's first input.
   */
  create(news: readonly NewTask[]): Array<{ id: string; created: boolean }> | 'conflict' {
    const holders = new Map<string, Pick<NewTask, 'type' | 'tenantId' | 'payload'>>();
    for (const n of news) {
      if (n.idempotencyKey === null) continue;
      const h = holders.get(n.idempotencyKey) ?? this.tasks.find((t) => t.idempotencyKey === n.idempotencyKey);
      if (!h) holders.set(n.idempotencyKey, n);
      else if (h.type !== n.type || h.tenantId !== n.tenantId || !isDeepStrictEqual(h.payload, n.payload)) return 'conflict';
      else holders.set(n.idempotencyKey, h);
    }
    const out: Array<{ id: string; created: boolean }> = [];
    for (const n of news) {
      const existing = n.idempotencyKey === null ? undefined : this.tasks.find((t) => t.idempotencyKey === n.idempotencyKey);
      if (existing) {
        out.push({ id: existing.id, created: false });
        continue;
      }
      const now = this.now;
      const deadlineAt = n.timeoutMs === null ? null : now + n.timeoutMs;
      const boost = deadlineAt === null ? null : (n.boost ?? null);
      const task: ModelTask = {
        id: n.id,
        idempotencyKey: n.idempotencyKey,
        type: n.type,
        payload: n.payload,
        priority: n.priority,
        providerKey: n.providerKey,
        accountId: n.accountId,
        tenantId: n.tenantId,
        concurrencyKey: n.concurrencyKey,
        runAt: now + n.delayMs,
        deadlineAt,
        boostAt: boost === null ? null : deadlineAt! - boost.beforeDeadlineMs,
        boostPriority: boost === null ? null : boost.priority,
        fairTag: null,
        createdAt: now,
        seq: ++this.seq,
        status: TaskStatus.PENDING_SUBMIT,
        attempts: 0,
        maxAttempts: n.maxAttempts,
        idempotent: n.idempotent,
        leaseOwner: null,
        leaseId: null,
        leaseUntil: null,
        result: null,
        error: null,
        externalId: null,
        nextPollAt: null,
        pollErrors: 0,
        cancelRequested: false,
        finishedAt: null,
      };
      this.tag(task);
      if (boost !== null) this.unfired.add(task.id);
      this.tasks.push(task);
      out.push({ id: n.id, created: true });
    }
    return out;
  }

  /** In-flight tasks (counted from statuses) per account, tenant and concurrency key. */
  private inFlightCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    const add = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
    for (const t of this.tasks) {
      if (!isInFlight(t.status)) continue;
      if (t.accountId !== null) add(`a:${accountKey(t.providerKey, t.accountId)}`);
      if (t.tenantId !== null) add(`t:${t.tenantId}`);
      if (t.concurrencyKey !== null) add(`c:${t.concurrencyKey}`);
    }
    return counts;
  }

  /** Every limit but the rate; the rate is checked (and spent) last, only when all others pass. */
  private slotsFree(c: ModelTask, inFlight: Map<string, number>): boolean {
    const p = this.limits.providers[c.providerKey] ?? emptyProviderLimits();
    if (p.paused) return false;
    const full = (key: string, lim: number | null) => lim !== null && (inFlight.get(key) ?? 0) >= lim;
    if (c.accountId !== null && full(`a:${accountKey(c.providerKey, c.accountId)}`, effectiveAccountLimit(this.limits, c.providerKey, c.accountId))) return false;
    if (c.tenantId !== null && full(`t:${c.tenantId}`, effectiveTenantQuota(this.limits, c.tenantId))) return false;
    if (c.concurrencyKey !== null && full(`c:${c.concurrencyKey}`, effectiveConcurrencyKeyLimit(this.limits, c.concurrencyKey))) return false;
    return true;
  }

  private takeToken(providerKey: string): boolean {
    const p = this.limits.providers[providerKey] ?? emptyProviderLimits();
    if (p.qps === null) return true;
    const d = gcra(this.tat.get(providerKey) ?? 0, this.now, p.qps, effectiveBurst(p));
    if (!d.allowed) return false;
    this.tat.set(providerKey, d.tat);
    return true;
  }

  claimSubmissions(limit: number, leaseMs: number, owner: string): { claimed: ModelTask[]; timedOut: ModelTask[]; boosted: Array<{ id: string; fromPriority: number }> } {
    const boosted = this.fireBoosts();
    const claimed: ModelTask[] = [];
    const timedOut: ModelTask[] = [];
    const now = this.now;
    while (claimed.length < limit) {
      const candidates = this.tasks
        .filter((t) => t.status === TaskStatus.PENDING_SUBMIT && t.runAt <= now)
        .map((t) => ({ t, key: referenceKey(t, this.agingIntervalMs) }))
        .sort((a, b) => compareKeys(a.key, b.key))
        .map((c) => c.t);
      const inFlight = this.inFlightCounts();
      let picked: ModelTask | null = null;
      for (const c of candidates) {
        if (c.deadlineAt !== null && c.deadlineAt <= now) {
          this.finish(c, TaskStatus.TIMED_OUT);
          timedOut.push(c);
          continue;
        }
        if (this.slotsFree(c, inFlight) && this.takeToken(c.providerKey)) {
          picked = c;
          break;
        }
      }
      if (!picked) break;
      picked.status = TaskStatus.SUBMITTING;
      this.lease(picked, owner, leaseMs);
      if (picked.fairTag !== null) {
        const v = this.virtualTime.get(picked.priority) ?? 0n;
        const tag = BigInt(picked.fairTag);
        this.virtualTime.set(picked.priority, tag > v ? tag : v);
      }
      claimed.push(picked);
    }
    return { claimed: claimed.map(copy), timedOut: timedOut.map(copy), boosted };
  }

  claimPolls(limit: number, leaseMs: number, owner: string): ModelTask[] {
    const now = this.now;
    const due = this.tasks
      .filter(
        (t) =>
          (t.status === TaskStatus.SUBMITTED || t.status === TaskStatus.RUNNING) &&
          ((t.nextPollAt !== null && t.nextPollAt <= now) || t.cancelRequested) &&
          (t.leaseUntil === null || t.leaseUntil <= now),
      )
      .sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.seq - b.seq)
      .slice(0, limit);
    for (const t of due) this.lease(t, owner, leaseMs);
    return due.map(copy);
  }

  private lease(t: ModelTask, owner: string, leaseMs: number): void {
    t.leaseOwner = owner;
    t.leaseId = `m${++this.leaseSeq}`;
    t.leaseUntil = this.now + leaseMs;
  }

  private clearLease(t: ModelTask): void {
    t.leaseOwner = null;
    t.leaseId = null;
    t.leaseUntil = null;
  }

  private finish(t: ModelTask, status: TerminalStatus): void {
    t.status = status;
    t.finishedAt = this.now;
    t.nextPollAt = null;
    this.clearLease(t);
  }

  private fenced(id: string, leaseId: string, apply: (t: ModelTask) => void): FencedResult {
    const t = this.get(id);
    if (!t || t.leaseId !== leaseId) return { ok: false, stale: true };
    apply(t);
    return { ok: true, task: copy(t) };
  }

  renewLease(id: string, leaseId: string, leaseMs: number): FencedResult {
    return this.fenced(id, leaseId, (t) => {
      t.leaseUntil = this.now + leaseMs;
    });
  }

  markSubmitted(id: string, leaseId: string, externalId: string, status: TaskStatus.SUBMITTED | TaskStatus.RUNNING, pollDelayMs: number): FencedResult {
    return this.fenced(id, leaseId, (t) => {
      t.status = status;
      t.externalId = externalId;
      t.nextPollAt = this.now + pollDelayMs;
      this.clearLease(t);
    });
  }

  recordPoll(id: string, leaseId: string, status: TaskStatus.SUBMITTED | TaskStatus.RUNNING, nextPollDelayMs: number, pollErrors: number): FencedResult {
    return this.fenced(id, leaseId, (t) => {
      t.status = status;
      t.nextPollAt = this.now + nextPollDelayMs;
      t.pollErrors = pollErrors;
      this.clearLease(t);
    });
  }

  /** `remove`: removeOnComplete / removeOnFail `true`, the task is deleted in the same step. */
  complete(id: string, leaseId: string, status: TerminalStatus, result: unknown, error: string | null, remove = false): FencedResult {
    const r = this.fenced(id, leaseId, (t) => {
      t.result = result ?? null;
      t.error = error;
      this.finish(t, status);
    });
    if (r.ok && remove) this.tasks.splice(this.tasks.findIndex((t) => t.id === id), 1);
    return r;
  }

  retry(id: string, leaseId: string, delayMs: number, error: string): FencedResult {
    return this.fenced(id, leaseId, (t) => {
      t.attempts += 1;
      if (t.cancelRequested) {
        this.finish(t, TaskStatus.CANCELED);
        return;
      }
      t.status = TaskStatus.PENDING_SUBMIT;
      t.runAt = this.now + delayMs;
      t.error = error;
      this.clearLease(t);
    });
  }

  /** The holder gives the task back untouched: attempts, runAt, priority and error kept. */
  release(id: string, leaseId: string): FencedResult {
    return this.fenced(id, leaseId, (t) => {
      if (t.cancelRequested) {
        this.finish(t, TaskStatus.CANCELED);
        return;
      }
      t.status = TaskStatus.PENDING_SUBMIT;
      this.clearLease(t);
    });
  }

  recoverExpired(): Array<{ id: string; from: TaskStatus; to: TaskStatus }> {
    const now = this.now;
    const out: Array<{ id: string; from: TaskStatus; to: TaskStatus }> = [];
    for (const t of this.tasks) {
      const expired = t.leaseUntil !== null && t.leaseUntil <= now;
      const from = t.status;
      if (t.status === TaskStatus.SUBMITTING && expired) {
        t.attempts += 1; // a lost submit is a failed attempt, whatever comes next
        if (!t.idempotent) this.finish(t, TaskStatus.SUBMIT_UNKNOWN);
        else if (t.cancelRequested) this.finish(t, TaskStatus.CANCELED);
        else if (t.attempts >= t.maxAttempts) this.finish(t, TaskStatus.FAILED);
        else {
          t.status = TaskStatus.PENDING_SUBMIT;
          this.clearLease(t);
        }
        out.push({ id: t.id, from, to: t.status });
      } else if ((t.status === TaskStatus.SUBMITTED || t.status === TaskStatus.RUNNING) && expired) {
        this.clearLease(t);
      }
      const live = t.leaseUntil !== null && t.leaseUntil > now;
      if (!isTerminal(t.status) && t.deadlineAt !== null && t.deadlineAt <= now && !live) {
        const f = t.status;
        this.finish(t, TaskStatus.TIMED_OUT);
        out.push({ id: t.id, from: f, to: TaskStatus.TIMED_OUT });
      }
    }
    return out;
  }

  cancel(id: string): ModelTask | null {
    const t = this.get(id);
    if (!t) return null;
    if (t.status === TaskStatus.PENDING_SUBMIT) this.finish(t, TaskStatus.CANCELED);
    else if (isInFlight(t.status)) t.cancelRequested = true;
    return copy(t);
  }

  changePriority(id: string, priority: number): 'ok' | 'invalid' | 'notfound' {
    const t = this.get(id);
    if (!t) return 'notfound';
    if (t.status !== TaskStatus.PENDING_SUBMIT) return 'invalid';
    if (this.unfired.has(id) && t.boostAt! <= this.now) this.unfired.delete(id); // fired unused: the explicit priority wins
    this.setPriority(t, priority);
    return 'ok';
  }

  setLimits(u: LimitUpdate): void {
    const l = this.limits;
    switch (u.kind) {
      case 'provider': {
        const p = { ...(l.providers[u.providerKey] ?? emptyProviderLimits()) };
        if (u.paused !== undefined) p.paused = u.paused;
        if (u.qps !== undefined) p.qps = u.qps;
        if (u.burst !== undefined) p.burst = u.burst;
        if (u.accountConcurrency !== undefined) p.accountConcurrency = u.accountConcurrency;
        l.providers[u.providerKey] = p;
        return;
      }
      case 'account': {
        const k = accountKey(u.providerKey, u.accountId);
        if (u.concurrency === null) delete l.accounts[k];
        else l.accounts[k] = { providerKey: u.providerKey, accountId: u.accountId, concurrency: u.concurrency };
        return;
      }
      case 'tenant':
        if (u.quota === null) delete l.tenants[u.tenantId];
        else l.tenants[u.tenantId] = u.quota;
        return;
      case 'defaultTenant':
        l.defaultTenantQuota = u.quota;
        return;
      case 'concurrencyKey':
        if (u.limit === null) delete l.concurrencyKeys[u.key];
        else l.concurrencyKeys[u.key] = u.limit;
        return;
      case 'tenantWeight':
        if (u.weight === null) delete l.tenantWeights[u.tenantId];
        else l.tenantWeights[u.tenantId] = u.weight;
        return;
    }
  }

  /** TaskStore.requeue: a finished task that did not succeed back to PENDING_SUBMIT, a fresh attempt (core/requeue.ts). */
  requeue(id: string): 'ok' | 'invalid' | 'notfound' {
    const t = this.get(id);
    if (!t) return 'notfound';
    if (!isRetryable(t.status)) return 'invalid';
    Object.assign(t, {
      status: TaskStatus.PENDING_SUBMIT,
      runAt: this.now,
      deadlineAt: requeuedDeadline(t, this.now),
      attempts: 0,
      pollErrors: 0,
      cancelRequested: false,
      error: null,
      result: null,
      externalId: null,
      nextPollAt: null,
      finishedAt: null,
    });
    this.clearLease(t);
    return 'ok';
  }

  purge(olderThan: number, limit: number): number {
    const victims = this.tasks.filter((t) => isTerminal(t.status) && t.finishedAt !== null && t.finishedAt <= olderThan).slice(0, limit);
    for (const v of victims) this.tasks.splice(this.tasks.indexOf(v), 1);
    return victims.length;
  }
}

function copy(t: ModelTask): ModelTask {
  return { ...t };
}
