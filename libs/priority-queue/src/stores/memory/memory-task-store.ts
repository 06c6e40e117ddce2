// Above ~400 lines on purpose: the TaskStore port has some thirty methods, each here in full and
// short (the work is in task-lifecycle.ts and the rooms it holds); one file per group of port
// methods would hide which method does what.
import { type LimitUpdate, type LimitsSnapshot } from '../../core/admission';
import { InvalidStateError, TaskNotFoundError } from '../../core/errors';
import { explainTask, type TaskExplanation } from '../../core/explain';
import type { TaskHistoryEntry } from '../../core/history';
import { checkIdempotentBatch } from '../../core/idempotency';
import { Messages } from '../../core/messages';
import { isRetryable, requeuedDeadline } from '../../core/requeue';
import { searchPage, type TaskPage, type TaskQuery } from '../../core/task-query';
import { TaskStatus, type Fence, type NewTask, type Task, type Transition } from '../../core/task';
import { refuseWeights } from '../../core/policies';
import type {
  BoostedTask,
  ClaimRequest,
  CompletionOutcome,
  CreateResult,
  ListQuery,
  PollOutcome,
  QueueStats,
  RetryOutcome,
  SubmissionClaim,
  SubmittedOutcome,
  TaskStore,
} from '../../core/task-store.port';
import { validateLimitUpdate, validateTaskQuery } from '../../core/validation';
import { cloneLimits } from './limits-state';
import { countAhead, nextCursorOf, queryPageSlots } from './task-scan';
export type { MemoryTaskStoreOptions } from './task-lifecycle';
import { inFlightCode, SC_CANCELED, SC_PENDING, SC_RUNNING, SC_SUBMITTED, SC_SUBMITTING, SC_TIMED_OUT, TaskLifecycle } from './task-lifecycle';
import {
  ATTEMPTS,
  CREATED_AT,
  DEADLINE_AT,
  ERROR,
  EXTERNAL_ID,
  F_CANCEL_REQUESTED,
  FINISHED_AT,
  IDEMPOTENCY_KEY,
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
 * TaskLifecycle (task-lifecycle.ts), which keeps the rooms in step: the lanes and limits
 * (lane-scheduler.ts, LANES.md), the timers (timers.ts) and the stats (pending-stats.ts).
 *
 * Returned tasks are fresh objects: object payloads and results are kept as JSON text and parsed
 * for each copy, so mutating a returned task or an input never changes the store.
 */
export class MemoryTaskStore extends TaskLifecycle implements TaskStore {
  // ---------------------------------------------------------------- lifecycle

  async init(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
  }

  async now(): Promise<number> {
    this.assertOpen();
    return this.clock.now();
  }

  async subscribe(listener: () => void): Promise<() => Promise<void>> {
    this.assertOpen();
    const own = () => listener();
    this.listeners.add(own);
    return async () => {
      this.listeners.delete(own);
    };
  }

  // ---------------------------------------------------------------- create / read

  async create(inputs: readonly NewTask[]): Promise<CreateResult[]> {
    this.assertOpen();
    checkIdempotentBatch(inputs, this.storedScope); // all or none: before anything is written
    const now = this.clock.now();
    const out = new Array<CreateResult>(inputs.length);
    let created = 0;
    this.policy.beginBatch(); // the fair tags of the batch are undone with it (undoBatch)
    try {
      for (let i = 0; i < inputs.length; i++) {
        out[i] = this.insert(inputs[i], now, out, i);
        if (out[i].created) created++;
      }
    } finally {
      this.policy.endBatch();
    }
    if (created > 0) this.notify();
    return out;
  }

  /**
   * Optional fast path of the port for one task (PriorityQueue.submit): the same as
   * `(await create([input]))[0]`, without the two arrays.
   */
  async createOne(input: NewTask): Promise<CreateResult> {
    this.assertOpen();
    if (input.idempotencyKey !== null) checkIdempotentBatch([input], this.storedScope);
    const r = this.insert(input, this.clock.now(), undefined, 0);
    if (r.created) this.notify();
    return r;
  }

  async get(id: string): Promise<Task | null> {
    this.assertOpen();
    const s = this.tasks.get(id);
    return s === undefined ? null : this.t.toTask(s);
  }

  async list(query: ListQuery): Promise<Task[]> {
    this.assertOpen();
    const sc = STATUS_CODE[query.status];
    if (sc === undefined) return [];
    return this.statusIndex.list(sc, query.limit, query.afterSeq ?? 0).map((s) => this.t.toTask(s));
  }

  // ---------------------------------------------------------------- claims

  async claimSubmissions(request: ClaimRequest): Promise<SubmissionClaim> {
    this.assertOpen();
    const now = this.clock.now();
    const t = this.t;
    // DESIGN §7: every due boost applies before this claim looks at the order
    const boosted: BoostedTask[] = [];
    this.policy.fireDue(now, (s, priority) => {
      const fromPriority = t.int(s, PRIORITY);
      this.reprioritize(s, priority, now);
      boosted.push({ task: t.toTask(s), fromPriority });
    });
    this.pending.promote(now);
    const timedOut = this.timeOutDue(now);
    const slots: number[] = [];
    const tokens: number[] = [];
    // the heads leave their lanes now; the rest of their pending state (bucket, token, deadline)
    // below, without reading the tasks in the loop
    this.scheduler.claim(request.limit, now, slots, tokens);
    // them first in one tight loop, so that their cache misses overlap instead of stalling one
    // task after the other (with a million tasks, each one's fields are far from the last's)
    this.t.prefetch(slots);
    let sink = 0;
    for (let i = 0; i < slots.length; i++) sink += this.statusIndex.peek(this.t.seq(slots[i]), SC_PENDING); // likewise
    this.t.sink += sink;
    const claimed = new Array<Task>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      this.pending.leaveClaimed(s, tokens[i]);
      this.policy.claimed(s);
      this.setStatus(s, SC_SUBMITTING, now);
      this.setLease(s, request.owner, request.leaseMs, now, LEASE_SUBMIT);
      claimed[i] = this.t.toTask(s);
    }
    const out: SubmissionClaim = { claimed, timedOut, nextWakeAt: this.pending.nextWakeAt() };
    if (boosted.length > 0) out.boosted = boosted;
    return out;
  }

  async claimPolls(request: ClaimRequest): Promise<Task[]> {
    this.assertOpen();
    const t = this.t;
    const now = this.clock.now();
    this.timers.noticeExpiredPollLeases(now);
    const out: Task[] = [];
    while (out.length < request.limit) {
      const s = this.timers.nextPoll(now);
      if (s === undefined) break;
      this.touch(s, now);
      this.setLease(s, request.owner, request.leaseMs, now, LEASE_POLL);
      out.push(t.toTask(s));
    }
    return out;
  }

  // ---------------------------------------------------------------- fenced writes

  async renewLease(fence: Fence, leaseMs: number): Promise<Task> {
    this.assertOpen();
    const s = this.fenced(fence);
    const now = this.clock.now();
    this.timers.dropLease(s);
    this.timers.pushLease(s, now + leaseMs, this.t.byte(s, SC) === SC_SUBMITTING ? LEASE_SUBMIT : LEASE_POLL);
    this.touch(s, now);
    return this.t.toTask(s);
  }

  async markSubmitted(fence: Fence, outcome: SubmittedOutcome): Promise<Task> {
    this.assertOpen();
    const t = this.t;
    const s = this.fenced(fence);
    this.expectStatus(s, 'markSubmitted', SC_SUBMITTING);
    const now = this.clock.now();
    this.clearLease(s);
    t.setRef(s, EXTERNAL_ID, outcome.externalId);
    t.setNum(s, NEXT_POLL_AT, now + outcome.pollDelayMs);
    this.setStatus(s, STATUS_CODE[outcome.status], now);
    this.timers.placeInFlight(s);
    return t.toTask(s);
  }

  async recordPoll(fence: Fence, outcome: PollOutcome): Promise<Task> {
    this.assertOpen();
    const t = this.t;
    const s = this.fenced(fence);
    this.expectStatus(s, 'recordPoll', SC_SUBMITTED, SC_RUNNING);
    const now = this.clock.now();
    this.clearLease(s);
    t.setNum(s, NEXT_POLL_AT, now + outcome.nextPollDelayMs);
    t.setInt(s, POLL_ERRORS, outcome.pollErrors);
    if (outcome.error !== undefined) t.setRef(s, ERROR, outcome.error);
    const sc = STATUS_CODE[outcome.status];
    if (t.byte(s, SC) !== sc) this.setStatus(s, sc, now);
    else this.touch(s, now);
    this.timers.placeInFlight(s);
    return t.toTask(s);
  }

  async complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    this.assertOpen();
    const t = this.t;
    const s = this.fenced(fence);
    const now = this.clock.now();
    t.setResult(s, outcome.result);
    t.setRef(s, ERROR, outcome.error === undefined ? null : outcome.error);
    if (outcome.attempt) t.setInt(s, ATTEMPTS, t.int(s, ATTEMPTS) + 1);
    this.finish(s, STATUS_CODE[outcome.status], now);
    return t.toTask(s);
  }

  async retry(fence: Fence, outcome: RetryOutcome): Promise<Task> {
    this.assertOpen();
    const t = this.t;
    const s = this.fenced(fence);
    this.expectStatus(s, 'retry', SC_SUBMITTING);
    const now = this.clock.now();
    t.setRef(s, ERROR, outcome.error);
    t.setInt(s, ATTEMPTS, t.int(s, ATTEMPTS) + 1);
    if (t.flag(s, F_CANCEL_REQUESTED)) {
      this.finish(s, SC_CANCELED, now);
    } else {
      t.setNum(s, RUN_AT, now + outcome.delayMs);
      this.backToPending(s, now);
    }
    return t.toTask(s);
  }

  async release(fence: Fence): Promise<Task> {
    this.assertOpen();
    const t = this.t;
    const s = this.fenced(fence);
    this.expectStatus(s, 'release', SC_SUBMITTING);
    const now = this.clock.now();
    if (t.flag(s, F_CANCEL_REQUESTED)) this.finish(s, SC_CANCELED, now);
    else this.backToPending(s, now);
    return t.toTask(s);
  }

  // ---------------------------------------------------------------- sweeps

  async recoverExpired(limit: number): Promise<Transition[]> {
    this.assertOpen();
    const t = this.t;
    const now = this.clock.now();
    const out: Transition[] = [];
    let n = 0;
    // lost submits
    for (let s = this.timers.submitLeases.top(); n < limit && s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.timers.submitLeases.top()) {
      n++;
      const from = t.status(s);
      this.recoverSubmit(s, now);
      out.push({ task: t.toTask(s), from, to: t.status(s) });
    }
    // lost polls: the lease is cleared, the poll will be claimed again (or the deadline applies)
    for (let s = this.timers.pollLeases.top(); n < limit && s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.timers.pollLeases.top()) {
      n++;
      this.expirePollLease(s, now, out);
    }
    for (const s of this.timers.expiredPollLeases) {
      if (n >= limit) break;
      n++;
      this.expirePollLease(s, now, out);
    }
    // deadlines of tasks without a live lease
    for (const heap of [this.timers.dueDeadlines, this.timers.otherDeadlines]) {
      for (let s = heap.top(); n < limit && s !== undefined && t.num(s, DEADLINE_AT) <= now; s = heap.top()) {
        n++;
        const from = t.status(s);
        this.finish(s, SC_TIMED_OUT, now);
        out.push({ task: t.toTask(s), from, to: t.status(s) });
      }
    }
    if (n > 0) this.notify();
    return out;
  }

  async purge(olderThan: number, limit: number): Promise<number> {
    this.assertOpen();
    const t = this.t;
    let n = 0;
    const f = this.finished;
    for (let s = f.top(); n < limit && s !== undefined && f.topK1() <= olderThan; s = f.top()) {
      const at = f.topK1();
      const seq = f.topK2();
      f.pop();
      // an entry of a task requeued since (or of an earlier occupant of the slot) is dead
      if (t.id(s) === null || t.seq(s) !== seq || t.num(s, FINISHED_AT) !== at) continue;
      this.tasks.delete(t.id(s));
      const key = t.ref<string | null>(s, IDEMPOTENCY_KEY);
      if (key !== null && this.byIdempotencyKey.get(key)?.slot === s) this.byIdempotencyKey.delete(key);
      const sc = t.byte(s, SC);
      this.history_?.drop(t.seq(s));
      this.policy.drop(s);
      this.statusIndex.remove(t.seq(s), sc);
      this.counts.statusCounts[sc]--;
      t.release(s);
      n++;
    }
    return n;
  }

  // ---------------------------------------------------------------- user operations

  async cancel(id: string): Promise<Task | null> {
    this.assertOpen();
    const t = this.t;
    const s = this.tasks.get(id);
    if (s === undefined) return null;
    const now = this.clock.now();
    const sc = t.byte(s, SC);
    if (sc === SC_PENDING) {
      this.finish(s, SC_CANCELED, now);
    } else if (inFlightCode(sc) && !t.flag(s, F_CANCEL_REQUESTED)) {
      t.setFlag(s, F_CANCEL_REQUESTED, true);
      this.touch(s, now);
      if (t.byte(s, POLL) === POLL_DUE) this.timers.putPoll(s, POLL_CANCEL);
      this.notify();
    }
    return t.toTask(s);
  }

  async changePriority(id: string, priority: number): Promise<Task> {
    this.assertOpen();
    const t = this.t;
    const s = this.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    if (t.byte(s, SC) !== SC_PENDING) throw new InvalidStateError(Messages.notPending(id, t.status(s)));
    const now = this.clock.now();
    this.policy.fireUnused(s, now); // a due boost not fired yet: the explicit priority wins
    if (t.int(s, PRIORITY) !== priority) this.reprioritize(s, priority, now);
    else this.touch(s, now);
    return t.toTask(s);
  }


  async stats(): Promise<QueueStats> {
    this.assertOpen();
    const now = this.clock.now();
    this.pending.promote(now);
    return { now, ...this.counts.snapshot(now), ...this.scheduler.inFlightStats() };
  }

  async getLimits(): Promise<LimitsSnapshot> {
    this.assertOpen();
    return cloneLimits(this.scheduler.limits);
  }

  async setLimits(update: LimitUpdate): Promise<LimitsSnapshot> {
    this.assertOpen();
    validateLimitUpdate(update);
    refuseWeights('MemoryTaskStore', this.policies, update, this.fairness, this.queue);
    this.scheduler.setLimits(update);
    this.notify();
    return cloneLimits(this.scheduler.limits);
  }

  // ---------------------------------------------------------------- operations (retry, explain, history, query)

  async requeue(id: string): Promise<Transition> {
    this.assertOpen();
    const t = this.t;
    const s = this.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    const from = t.status(s);
    if (!isRetryable(from)) throw new InvalidStateError(Messages.cannotRetry(id, from));
    const now = this.clock.now();
    // back in a lane: the terminal task left its lane (finish), so it joins it again
    const lane = this.scheduler.laneOf(t.ref<LaneKeys>(s, KEYS));
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
    this.setStatus(s, SC_PENDING, now);
    this.pending.enter(s, now);
    this.notify();
    return { task: t.toTask(s), from, to: TaskStatus.PENDING_SUBMIT };
  }

  async explain(id: string): Promise<TaskExplanation> {
    this.assertOpen();
    const s = this.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    const now = this.clock.now();
    this.pending.promote(now); // due delayed tasks into their buckets (countAhead reads them), as a claim would
    const state = this.scheduler.admissionState();
    return explainTask(this.t.toTask(s), now, state, (admissible, cap) => {
      // lanes share their LaneKeys object: one verdict per lane
      const verdicts = new Map<LaneKeys, boolean>();
      const cached = (k: LaneKeys) => {
        let ok = verdicts.get(k);
        if (ok === undefined) verdicts.set(k, (ok = admissible(k)));
        return ok;
      };
      return countAhead(this.scan(), s, now, cached, cap);
    });
  }

  async history(id: string): Promise<TaskHistoryEntry[]> {
    this.assertOpen();
    const s = this.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    return this.history_ === null ? [] : this.history_.read(s, this.t.seq(s), this.t.num(s, CREATED_AT));
  }

  async query(query: TaskQuery): Promise<TaskPage> {
    this.assertOpen();
    const q = validateTaskQuery(query);
    const now = this.clock.now();
    if (q.search !== undefined) {
      const byId = this.tasks.get(q.search);
      const byKey = this.byIdempotencyKey.get(q.search)?.slot;
      const found = [byId, byKey].map((s) => (s === undefined ? null : this.t.toTask(s)));
      return searchPage(found, q, now, this.agingIntervalMs);
    }
    this.pending.promote(now); // due delayed tasks into their buckets, as a claim or stats() would
    const c = this.scan();
    const slots = queryPageSlots(c, q, now);
    const nextCursor = nextCursorOf(c, q, slots, now);
    return { tasks: slots.slice(0, q.limit).map((s) => this.t.toTask(s)), nextCursor };
  }

}
