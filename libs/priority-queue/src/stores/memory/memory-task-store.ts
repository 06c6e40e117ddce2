// Above ~400 lines on purpose: the TaskStore port has some thirty methods, each here in full and
// short (the work is in task-lifecycle.ts and the rooms it holds); one file per group of port
// methods would hide which method does what.
import { type LimitUpdate, type LimitsSnapshot } from '../../core/admission';
import { InvalidStateError, TaskNotFoundError } from '../../core/errors';
import { explainTask, type TaskExplanation } from '../../core/explain';
import type { TaskHistoryEntry } from '../../core/history';
import { completeThenClaim } from '../../core/complete-and-claim';
import { checkIdempotentBatch } from '../../core/idempotency';
import { Messages } from '../../core/messages';
import { REMOVAL_TRIM_MAX, removalSide, type RemovalRule } from '../../core/removal';
import { isRetryable, requeuedDeadline } from '../../core/requeue';
import { searchPage, type TaskPage, type TaskQuery } from '../../core/task-query';
import { TaskStatus, type Fence, type NewTask, type Task, type Transition } from '../../core/task';
import { refuseWeights } from '../../core/policies';
import type {
  BoostedTask,
  ClaimRequest,
  CompleteAndClaimResult,
  CompleteCall,
  CompletionOutcome,
  CreateResult,
  ListQuery,
  PollOutcome,
  QueueStats,
  RetryOutcome,
  SubmissionClaim,
  StorePolicies,
  SubmittedOutcome,
  SweepRequest,
  TaskStore,
} from '../../core/task-store.port';
import { validateLimitUpdate, validateTaskQuery } from '../../core/validation';
import { cloneLimits } from './limits-state';
import { KeptFinished } from './kept-finished';
import { countAhead, nextCursorOf, queryPageSlots } from './task-scan';
import type { Fairness } from '../../core/fairness';
export type { MemoryTaskStoreOptions } from './task-lifecycle';
import { inFlightCode, SC_CANCELED, SC_PENDING, SC_RUNNING, SC_SUBMITTED, SC_SUBMITTING, SC_TIMED_OUT, TaskLifecycle, type MemoryTaskStoreOptions } from './task-lifecycle';
import {
  ATTEMPTS,
  CREATED_AT,
  DEADLINE_AT,
  ERROR,
  EXTERNAL_ID,
  F_CANCEL_REQUESTED,
  FINISHED_AT,
  IDEMPOTENCY_KEY,
  TYPE,
  KEYS,
  LANE,
  LEASE_POLL,
  LEASE_SUBMIT,
  LEASE_UNTIL,
  NEXT_POLL_AT,
  POLL,
  POLL_CANCEL,
  POLL_DUE,
  POLL_ERRORS,
  PRIORITY,
  RUN_AT,
  SC,
  STATUS_CODE,
  type LaneKeys,
} from './task-table';

/**
 * The embedded default TaskStore: everything in this process's memory, one event loop, so every
 * operation is atomic without locks. This class is the port (core/task-store.port.ts) and
 * nothing else: each method checks its input and fence and moves tasks with the operations of
 * its TaskLifecycle (task-lifecycle.ts), which keeps the rooms in step: the lanes and limits
 * (lane-scheduler.ts, LANES.md), the timers (timers.ts) and the stats (pending-stats.ts).
 *
 * Returned tasks are fresh objects: object payloads and results are kept as JSON text and parsed
 * for each copy, so mutating a returned task or an input never changes the store.
 */
export class MemoryTaskStore implements TaskStore {
  readonly agingIntervalMs: number;
  readonly historyLimit: number;
  /** DESIGN §7 fair share (fixed for the store's life) and deadline boosts: policy-state.ts. */
  readonly fairness: Fairness | null;
  readonly policies: StorePolicies;
  /** No I/O: a call never waits for another, so the Worker need not send completes with its claims. */
  readonly parallelCalls = true;
  /** Finished tasks kept under a removal count / age (core/removal.ts). */
  private readonly kept = new KeptFinished();
  /** The store's state and the moves of a task between statuses (task-lifecycle.ts). */
  private readonly m: TaskLifecycle;
  /** Store time until which the sweep lease is taken (sweepExpired). */
  private sweepLeaseUntil = -Infinity;

  constructor(options: MemoryTaskStoreOptions = {}) {
    const m = (this.m = new TaskLifecycle(options));
    this.agingIntervalMs = m.agingIntervalMs;
    this.historyLimit = m.historyLimit;
    this.fairness = m.fairness;
    this.policies = m.policies;
  }

  // ---------------------------------------------------------------- lifecycle

  async init(): Promise<void> {
    this.m.assertOpen();
  }

  async close(): Promise<void> {
    this.m.closed = true;
    this.m.wakes.clear();
  }

  async now(): Promise<number> {
    this.m.assertOpen();
    return this.m.clock.now();
  }

  async subscribe(listener: () => void): Promise<() => Promise<void>> {
    this.m.assertOpen();
    const off = this.m.wakes.add(listener);
    return async () => void off();
  }

  // ---------------------------------------------------------------- create / read

  async create(inputs: readonly NewTask[]): Promise<CreateResult[]> {
    this.m.assertOpen();
    checkIdempotentBatch(inputs, this.m.storedScope); // all or none: before anything is written
    const now = this.m.clock.now();
    const out = new Array<CreateResult>(inputs.length);
    let created = 0;
    this.m.policy.beginBatch(); // the fair tags of the batch are undone with it (undoBatch)
    try {
      for (let i = 0; i < inputs.length; i++) {
        out[i] = this.m.insert(inputs[i], now, out, i);
        if (out[i].created) created++;
      }
    } finally {
      this.m.policy.endBatch();
    }
    if (created > 0) this.m.notify();
    return out;
  }

  newTaskId(): string {
    return this.m.ids.next();
  }

  /**
   * Optional fast path of the port for one task (PriorityQueue.submit): the same as
   * `(await create([input]))[0]`, without the two arrays.
   */
  async createOne(input: NewTask): Promise<CreateResult> {
    this.m.assertOpen();
    if (input.idempotencyKey !== null) checkIdempotentBatch([input], this.m.storedScope);
    const r = this.m.insert(input, this.m.clock.now(), undefined, 0);
    if (r.created) this.m.notify();
    return r;
  }

  async get(id: string): Promise<Task | null> {
    this.m.assertOpen();
    const s = this.m.tasks.get(id);
    return s === undefined ? null : this.m.t.toTask(s);
  }

  async list(query: ListQuery): Promise<Task[]> {
    this.m.assertOpen();
    const sc = STATUS_CODE[query.status];
    if (sc === undefined) return [];
    return this.m.statusIndex.list(sc, query.limit, query.afterSeq ?? 0).map((s) => this.m.t.toTask(s));
  }

  // ---------------------------------------------------------------- claims

  async claimSubmissions(request: ClaimRequest): Promise<SubmissionClaim> {
    this.m.assertOpen();
    const now = this.m.clock.now();
    const t = this.m.t;
    // DESIGN §7: every due boost applies before this claim looks at the order
    const boosted: BoostedTask[] = [];
    this.m.policy.fireDue(now, (s, priority) => {
      const fromPriority = t.int(s, PRIORITY);
      this.m.reprioritize(s, priority, now);
      boosted.push({ task: t.toTask(s), fromPriority });
    });
    this.m.pending.promote(now);
    const timedOut = this.m.timeOutDue(now);
    const slots: number[] = [];
    const tokens: number[] = [];
    // the heads leave their lanes now; the rest of their pending state (bucket, token, deadline)
    // below, without reading the tasks in the loop
    this.m.scheduler.claim(request.limit, now, slots, tokens);
    // them first in one tight loop, so that their cache misses overlap instead of stalling one
    // task after the other (with a million tasks, each one's fields are far from the last's)
    this.m.t.prefetch(slots);
    let sink = 0;
    for (let i = 0; i < slots.length; i++) sink += this.m.statusIndex.peek(this.m.t.seq(slots[i]), SC_PENDING); // likewise
    this.m.t.sink += sink;
    const claimed = new Array<Task>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      this.m.pending.leaveClaimed(s, tokens[i]);
      this.m.policy.claimed(s);
      this.m.setStatus(s, SC_SUBMITTING, now);
      this.m.setLease(s, request.owner, request.leaseMs, now, LEASE_SUBMIT);
      claimed[i] = this.m.t.toTask(s);
    }
    const out: SubmissionClaim = { claimed, timedOut, nextWakeAt: this.m.pending.nextWakeAt() };
    if (boosted.length > 0) out.boosted = boosted;
    return out;
  }

  async claimPolls(request: ClaimRequest): Promise<Task[]> {
    this.m.assertOpen();
    const t = this.m.t;
    const now = this.m.clock.now();
    this.m.timers.noticeExpiredPollLeases(now);
    const out: Task[] = [];
    while (out.length < request.limit) {
      const s = this.m.timers.nextPoll(now);
      if (s === undefined) break;
      this.m.touch(s, now);
      this.m.setLease(s, request.owner, request.leaseMs, now, LEASE_POLL);
      out.push(t.toTask(s));
    }
    return out;
  }

  // ---------------------------------------------------------------- fenced writes

  async renewLease(fence: Fence, leaseMs: number): Promise<Task> {
    this.m.assertOpen();
    const s = this.m.fenced(fence);
    const now = this.m.clock.now();
    this.m.timers.dropLease(s);
    this.m.timers.pushLease(s, now + leaseMs, this.m.t.byte(s, SC) === SC_SUBMITTING ? LEASE_SUBMIT : LEASE_POLL);
    this.m.touch(s, now);
    return this.m.t.toTask(s);
  }

  async markSubmitted(fence: Fence, outcome: SubmittedOutcome): Promise<Task> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.fenced(fence);
    this.m.expectStatus(s, 'markSubmitted', SC_SUBMITTING);
    const now = this.m.clock.now();
    this.m.clearLease(s);
    t.setRef(s, EXTERNAL_ID, outcome.externalId);
    t.setNum(s, NEXT_POLL_AT, now + outcome.pollDelayMs);
    this.m.setStatus(s, STATUS_CODE[outcome.status], now);
    this.m.timers.placeInFlight(s);
    return t.toTask(s);
  }

  async recordPoll(fence: Fence, outcome: PollOutcome): Promise<Task> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.fenced(fence);
    this.m.expectStatus(s, 'recordPoll', SC_SUBMITTED, SC_RUNNING);
    const now = this.m.clock.now();
    this.m.clearLease(s);
    t.setNum(s, NEXT_POLL_AT, now + outcome.nextPollDelayMs);
    t.setInt(s, POLL_ERRORS, outcome.pollErrors);
    if (outcome.error !== undefined) t.setRef(s, ERROR, outcome.error);
    const sc = STATUS_CODE[outcome.status];
    if (t.byte(s, SC) !== sc) this.m.setStatus(s, sc, now);
    else this.m.touch(s, now);
    this.m.timers.placeInFlight(s);
    return t.toTask(s);
  }

  /** The completes then the claim, back to back (no I/O: nothing runs between them). */
  completeAndClaim(completes: readonly CompleteCall[], claim: ClaimRequest): Promise<CompleteAndClaimResult> {
    return completeThenClaim(this, completes, claim);
  }

  async complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.fenced(fence);
    const now = this.m.clock.now();
    t.setResult(s, outcome.result);
    t.setRef(s, ERROR, outcome.error === undefined ? null : outcome.error);
    if (outcome.attempt) t.setInt(s, ATTEMPTS, t.int(s, ATTEMPTS) + 1);
    this.m.finish(s, STATUS_CODE[outcome.status], now);
    const task = t.toTask(s);
    if (outcome.remove) this.applyRemoval(s, outcome.remove, now);
    return task;
  }

  /** A task finished under a removal rule: deleted now, or kept and the older ones beyond the rule deleted. */
  private applyRemoval(s: number, rule: RemovalRule, now: number): void {
    if (rule.now) {
      this.deleteTask(s);
      this.m.finished.noteRemoved();
      return;
    }
    const key = this.keptKey(s);
    this.kept.add(key, this.m.t.seq(s), s, now);
    for (const old of this.kept.beyond(key, rule.count, rule.ageMs === null ? null : now - rule.ageMs, REMOVAL_TRIM_MAX)) {
      this.deleteTask(old);
      this.m.finished.noteRemoved();
    }
  }

  private keptKey(s: number): string {
    return KeptFinished.key(this.m.t.ref<string>(s, TYPE), removalSide(this.m.t.status(s)));
  }

  /** Deletes a terminal task with everything that names it (purge, removal). */
  private deleteTask(s: number): void {
    const t = this.m.t;
    const seq = t.seq(s);
    this.kept.remove(this.keptKey(s), seq);
    this.m.tasks.delete(t.id(s));
    const key = t.ref<string | null>(s, IDEMPOTENCY_KEY);
    if (key !== null && this.m.byIdempotencyKey.get(key)?.slot === s) this.m.byIdempotencyKey.delete(key);
    const sc = t.byte(s, SC);
    this.m.history_?.drop(seq);
    this.m.policy.drop(s);
    this.m.statusIndex.remove(seq, sc);
    this.m.counts.statusCounts[sc]--;
    t.release(s);
  }

  async retry(fence: Fence, outcome: RetryOutcome): Promise<Task> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.fenced(fence);
    this.m.expectStatus(s, 'retry', SC_SUBMITTING);
    const now = this.m.clock.now();
    t.setRef(s, ERROR, outcome.error);
    t.setInt(s, ATTEMPTS, t.int(s, ATTEMPTS) + 1);
    if (t.flag(s, F_CANCEL_REQUESTED)) {
      this.m.finish(s, SC_CANCELED, now);
    } else {
      t.setNum(s, RUN_AT, now + outcome.delayMs);
      this.m.backToPending(s, now);
    }
    return t.toTask(s);
  }

  async release(fence: Fence): Promise<Task> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.fenced(fence);
    this.m.expectStatus(s, 'release', SC_SUBMITTING);
    const now = this.m.clock.now();
    if (t.flag(s, F_CANCEL_REQUESTED)) this.m.finish(s, SC_CANCELED, now);
    else this.m.backToPending(s, now);
    return t.toTask(s);
  }

  // ---------------------------------------------------------------- sweeps

  async recoverExpired(limit: number): Promise<Transition[]> {
    this.m.assertOpen();
    return this.recover(limit, this.m.clock.now()).out;
  }

  /** The sweep lease (port: sweepExpired) is a time in this store's memory: its workers share one process. */
  async sweepExpired(request: SweepRequest): Promise<Transition[] | null> {
    this.m.assertOpen();
    const now = this.m.clock.now();
    if (this.sweepLeaseUntil > now) return null;
    const { out, n } = this.recover(request.limit, now);
    if (n > 0) this.sweepLeaseUntil = now + request.leaseMs;
    return out;
  }

  /** One sweep at `now`: the transitions, and `n` tasks changed (polls whose lease was cleared included). */
  private recover(limit: number, now: number): { out: Transition[]; n: number } {
    const t = this.m.t;
    const out: Transition[] = [];
    let n = 0;
    // lost submits
    for (let s = this.m.timers.submitLeases.top(); n < limit && s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.m.timers.submitLeases.top()) {
      n++;
      const from = t.status(s);
      this.m.recoverSubmit(s, now);
      out.push({ task: t.toTask(s), from, to: t.status(s) });
    }
    // lost polls: the lease is cleared, the poll will be claimed again (or the deadline applies)
    for (let s = this.m.timers.pollLeases.top(); n < limit && s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.m.timers.pollLeases.top()) {
      n++;
      this.m.expirePollLease(s, now, out);
    }
    for (const s of this.m.timers.expiredPollLeases) {
      if (n >= limit) break;
      n++;
      this.m.expirePollLease(s, now, out);
    }
    // deadlines of tasks without a live lease
    for (const heap of [this.m.timers.dueDeadlines, this.m.timers.otherDeadlines]) {
      for (let s = heap.top(); n < limit && s !== undefined && t.num(s, DEADLINE_AT) <= now; s = heap.top()) {
        n++;
        const from = t.status(s);
        this.m.finish(s, SC_TIMED_OUT, now);
        out.push({ task: t.toTask(s), from, to: t.status(s) });
      }
    }
    if (n > 0) this.m.notify();
    return { out, n };
  }

  async purge(olderThan: number, limit: number): Promise<number> {
    this.m.assertOpen();
    const t = this.m.t;
    let n = 0;
    const f = this.m.finished;
    for (let s = f.top(); n < limit && s !== undefined && f.topK1() <= olderThan; s = f.top()) {
      const at = f.topK1();
      const seq = f.topK2();
      f.pop();
      // an entry of a task requeued since (or of an earlier occupant of the slot) is dead
      if (t.id(s) === null || t.seq(s) !== seq || t.num(s, FINISHED_AT) !== at) continue;
      this.deleteTask(s);
      n++;
    }
    return n;
  }

  // ---------------------------------------------------------------- user operations

  async cancel(id: string): Promise<Task | null> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.tasks.get(id);
    if (s === undefined) return null;
    const now = this.m.clock.now();
    const sc = t.byte(s, SC);
    if (sc === SC_PENDING) {
      this.m.finish(s, SC_CANCELED, now);
    } else if (inFlightCode(sc) && !t.flag(s, F_CANCEL_REQUESTED)) {
      t.setFlag(s, F_CANCEL_REQUESTED, true);
      this.m.touch(s, now);
      if (t.byte(s, POLL) === POLL_DUE) this.m.timers.putPoll(s, POLL_CANCEL);
      this.m.notify();
    }
    return t.toTask(s);
  }

  async changePriority(id: string, priority: number): Promise<Task> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    if (t.byte(s, SC) !== SC_PENDING) throw new InvalidStateError(Messages.notPending(id, t.status(s)));
    const now = this.m.clock.now();
    this.m.policy.fireUnused(s, now); // a due boost not fired yet: the explicit priority wins
    if (t.int(s, PRIORITY) !== priority) this.m.reprioritize(s, priority, now);
    else this.m.touch(s, now);
    return t.toTask(s);
  }


  async stats(): Promise<QueueStats> {
    this.m.assertOpen();
    const now = this.m.clock.now();
    this.m.pending.promote(now);
    return { now, ...this.m.counts.snapshot(now), ...this.m.scheduler.inFlightStats() };
  }

  async getLimits(): Promise<LimitsSnapshot> {
    this.m.assertOpen();
    return cloneLimits(this.m.scheduler.limits);
  }

  async setLimits(update: LimitUpdate): Promise<LimitsSnapshot> {
    this.m.assertOpen();
    validateLimitUpdate(update);
    refuseWeights('MemoryTaskStore', this.m.policies, update, this.m.fairness, this.m.queue);
    this.m.scheduler.setLimits(update);
    this.m.notify();
    return cloneLimits(this.m.scheduler.limits);
  }

  // ---------------------------------------------------------------- operations (retry, explain, history, query)

  async requeue(id: string): Promise<Transition> {
    this.m.assertOpen();
    const t = this.m.t;
    const s = this.m.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    const from = t.status(s);
    if (!isRetryable(from)) throw new InvalidStateError(Messages.cannotRetry(id, from));
    const now = this.m.clock.now();
    this.kept.remove(this.keptKey(s), t.seq(s));
    // back in a lane: the terminal task left its lane (finish), so it joins it again
    const lane = this.m.scheduler.laneOf(t.ref<LaneKeys>(s, KEYS));
    lane.refs++;
    t.setRef(s, LANE, lane);
    t.setInt(s, ATTEMPTS, 0);
    t.setInt(s, POLL_ERRORS, 0);
    t.setFlag(s, F_CANCEL_REQUESTED, false);
    t.setRef(s, ERROR, null);
    t.setResult(s, null);
    t.setRef(s, EXTERNAL_ID, null);
    t.setNum(s, NEXT_POLL_AT, NaN);
    t.setNum(s, FINISHED_AT, NaN); // its entry in the finished heap is dead now (purge)
    t.setOpt(s, DEADLINE_AT, requeuedDeadline({ deadlineAt: t.opt(s, DEADLINE_AT), createdAt: t.num(s, CREATED_AT) }, now));
    t.setNum(s, RUN_AT, now);
    this.m.setStatus(s, SC_PENDING, now);
    this.m.pending.enter(s, now);
    this.m.notify();
    return { task: t.toTask(s), from, to: TaskStatus.PENDING_SUBMIT };
  }

  async explain(id: string): Promise<TaskExplanation> {
    this.m.assertOpen();
    const s = this.m.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    const now = this.m.clock.now();
    this.m.pending.promote(now); // due delayed tasks into their buckets (countAhead reads them), as a claim would
    const state = this.m.scheduler.admissionState();
    return explainTask(this.m.t.toTask(s), now, state, (admissible, cap) => {
      // lanes share their LaneKeys object: one verdict per lane
      const verdicts = new Map<LaneKeys, boolean>();
      const cached = (k: LaneKeys) => {
        let ok = verdicts.get(k);
        if (ok === undefined) verdicts.set(k, (ok = admissible(k)));
        return ok;
      };
      return countAhead(this.m.scan(), s, now, cached, cap);
    });
  }

  async history(id: string): Promise<TaskHistoryEntry[]> {
    this.m.assertOpen();
    const s = this.m.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    return this.m.history_ === null ? [] : this.m.history_.read(s, this.m.t.seq(s), this.m.t.num(s, CREATED_AT));
  }

  async query(query: TaskQuery): Promise<TaskPage> {
    this.m.assertOpen();
    const q = validateTaskQuery(query);
    const now = this.m.clock.now();
    if (q.search !== undefined) {
      const byId = this.m.tasks.get(q.search);
      const byKey = this.m.byIdempotencyKey.get(q.search)?.slot;
      const found = [byId, byKey].map((s) => (s === undefined ? null : this.m.t.toTask(s)));
      return searchPage(found, q, now, this.m.agingIntervalMs);
    }
    this.m.pending.promote(now); // due delayed tasks into their buckets, as a claim or stats() would
    const c = this.m.scan();
    const slots = queryPageSlots(c, q, now);
    const nextCursor = nextCursorOf(c, q, slots, now);
    return { tasks: slots.slice(0, q.limit).map((s) => this.m.t.toTask(s)), nextCursor };
  }

}
