// Above ~400 lines on purpose: insert (every field of a new task) and the undo of a failing
// create (tasks, lanes, fair tags) belong with the status moves whose indexes they fill and empty.
import { randomUUID } from 'node:crypto';
import { InvalidStateError, StaleLeaseError, StoreClosedError, TaskNotFoundError } from '../../core/errors';
import { DEFAULT_HISTORY_LIMIT } from '../../core/history';
import { scopeOf, type IdempotencyScope } from '../../core/idempotency';
import { Messages } from '../../core/messages';
import { LocalWakes } from '../../core/local-wakes';
import { TaskStatus, type Fence, type NewTask, type Task, type Transition } from '../../core/task';
import type { Fairness } from '../../core/fairness';
import { systemClock, type Clock, type CreateResult, type StoreOptions, type StorePolicies } from '../../core/task-store.port';
import { validateHistoryLimit, validateOrderOptions } from '../../core/validation';
import { HistoryLog } from './history-log';
import { IdIndex } from './id-index';
import { TaskIdSequence } from '../../core/task-ids';
import { LaneScheduler } from './lane-scheduler';
import type { Lane } from './lanes';
import { orderMode, type OrderMode } from './order-mode';
import { PendingStats } from './pending-stats';
import { PendingTasks } from './pending-tasks';
import { PolicyState } from './policy-state';
import { FinishedHeap } from './record-heaps';
import { StatusIndex } from './status-index';
import type { ScanContext } from './task-scan';
import { Timers } from './timers';
import {
  ATTEMPTS,
  CREATED_AT,
  DEADLINE,
  DEADLINE_AT,
  DEADLINE_NONE,
  F_CANCEL_REQUESTED,
  F_IDEMPOTENT,
  F_RANKED,
  FINISHED_AT,
  FLAGS,
  ID,
  IDEMPOTENCY_KEY,
  KEYS,
  L_TOK,
  LANE,
  LEASE,
  LEASE_ID,
  LEASE_NONE,
  LEASE_OWNER,
  LEASE_UNTIL,
  MAX_ATTEMPTS,
  NEXT_POLL_AT,
  P_TOK,
  PAYLOAD,
  POLICY,
  POLL,
  POLL_ERRORS,
  POLL_NONE,
  PRIORITY,
  Q_TOK,
  QUEUE,
  QUEUE_NONE,
  RUN_AT,
  SC,
  SEQ,
  STATUS_CODE,
  D_TOK,
  TaskTable,
  TYPE,
  UPDATED_AT,
  VERSION,
  type LaneKeys,
} from './task-table';

/** MemoryTaskStore options: the port's, and the queue's name for messages. */
export interface MemoryTaskStoreOptions extends StoreOptions {
  queue?: string;
}

export const SC_PENDING = STATUS_CODE[TaskStatus.PENDING_SUBMIT];
export const SC_SUBMITTING = STATUS_CODE[TaskStatus.SUBMITTING];
export const SC_SUBMITTED = STATUS_CODE[TaskStatus.SUBMITTED];
export const SC_RUNNING = STATUS_CODE[TaskStatus.RUNNING];

const SC_FAILED = STATUS_CODE[TaskStatus.FAILED];
export const SC_CANCELED = STATUS_CODE[TaskStatus.CANCELED];
export const SC_TIMED_OUT = STATUS_CODE[TaskStatus.TIMED_OUT];
const SC_SUBMIT_UNKNOWN = STATUS_CODE[TaskStatus.SUBMIT_UNKNOWN];

export function inFlightCode(sc: number): boolean {
  return sc === SC_SUBMITTING || sc === SC_SUBMITTED || sc === SC_RUNNING;
}

/**
 * The state of the memory store and the moves of a task between its statuses, which keep every
 * index in step: the task table (task-table.ts: numbers in typed arrays, so that a million tasks
 * are not a million record objects for the garbage collector), the id and status indexes, the
 * lanes and limits (lane-scheduler.ts), the timers (timers.ts: delayed tasks, deadlines,
 * leases, polls), the counts of stats() (pending-stats.ts), the PENDING_SUBMIT tasks
 * (pending-tasks.ts) and the history. The port's methods
 * are in memory-task-store.ts, whose store holds one of these; everything here is atomic by running
 * in one turn of the event loop.
 */
export class TaskLifecycle {
  readonly agingIntervalMs: number;
  readonly historyLimit: number;
  /** DESIGN §7 fair share (fixed for the store's life) and deadline boosts: policy-state.ts. */
  readonly fairness: Fairness | null;
  readonly policies: StorePolicies = { fairness: true, boost: true };
  /** Queue name in messages (memoryStore() gives it). */
  readonly queue: string;
  readonly policy: PolicyState;
  readonly clock: Clock;
  readonly order: OrderMode;
  closed = false;

  readonly t = new TaskTable(randomUUID().slice(0, 8) + '-');
  /** Ids of the tasks PriorityQueue submits here (MemoryTaskStore.newTaskId): the index keys them by number. */
  readonly ids = new TaskIdSequence();
  /** Slot of each task id. */
  readonly tasks = new IdIndex(this.ids);
  /** Slot of the task holding each idempotency key, and the fingerprint of its payload (core/idempotency.ts). */
  readonly byIdempotencyKey = new Map<string, { slot: number; fingerprint: string }>();
  readonly statusIndex = new StatusIndex();
  readonly scheduler: LaneScheduler;
  readonly timers: Timers;
  readonly counts: PendingStats;
  readonly pending: PendingTasks;
  readonly finished = new FinishedHeap(this.t);
  /** Per-task history (history-log.ts); null when historyLimit is 0. */
  readonly history_: HistoryLog | null;
  private seq = 0;
  /** Latest createdAt so far (creation ranks, see order-mode.ts). */
  private maxCreatedAt = -Infinity;
  /** Number of the last lease handed out (task-table.ts LEASE_ID), below LEASE_NUMBERS. */
  private leaseCounter = 0;
  /** The store's subscribers (port: subscribe), called once per event-loop turn of notify(). */
  readonly wakes = new LocalWakes();

  constructor(options: MemoryTaskStoreOptions = {}) {
    const order = validateOrderOptions(options);
    this.agingIntervalMs = order.agingIntervalMs;
    this.fairness = order.fairness;
    this.queue = options.queue ?? 'default';
    const historyLimit = (this.historyLimit = validateHistoryLimit(options.historyLimit, DEFAULT_HISTORY_LIMIT));
    this.clock = options.clock ?? systemClock;
    this.order = orderMode(this.agingIntervalMs, this.fairness !== null);
    const t = this.t;
    this.policy = new PolicyState(t, this.fairness !== null);
    const orderTie = this.order.tie;
    // heap tie-break of two slots whose inline keys tie (order-mode.ts)
    this.scheduler = new LaneScheduler(t, (a, b) => orderTie(t.orderFields(a), t.orderFields(b)));
    this.timers = new Timers(t);
    this.counts = new PendingStats(t);
    this.pending = new PendingTasks(t, this.order, this.scheduler, this.timers, this.counts, this.policy);
    this.history_ = historyLimit > 0 ? new HistoryLog(t, historyLimit) : null;
  }

  /** Creates one task (or finds its idempotency key) at `now`; `batch` and `index` for the all-or-none undo. */
  insert(input: NewTask, now: number, batch: CreateResult[] | undefined, index: number): CreateResult {
    const t = this.t;
    if (input.idempotencyKey !== null) {
      const existing = this.byIdempotencyKey.get(input.idempotencyKey);
      if (existing !== undefined) return { task: t.toTask(existing.slot), created: false };
    }
    const lane = this.scheduler.laneOf(input);
    const seq = ++this.seq;
    let ranked = false;
    if (now >= this.maxCreatedAt) {
      ranked = true; // created no earlier than every task before it: seq orders like (createdAt, seq)
      this.maxCreatedAt = now;
    }
    const s = t.alloc();
    const p = input.payload;
    const stored = TaskTable.storedPayload(p);
    t.setRef(s, ID, input.id);
    t.setRef(s, IDEMPOTENCY_KEY, input.idempotencyKey);
    t.setRef(s, TYPE, input.type);
    t.setRef(s, KEYS, lane.keys);
    t.setRef(s, PAYLOAD, stored.value);
    t.setRef(s, LANE, lane);
    const deadlineAt = input.timeoutMs === null ? null : now + input.timeoutMs;
    // RESULT, ERROR, EXTERNAL_ID, LEASE_OWNER, LEASE_ID: null in a fresh or released slot
    t.setNum(s, RUN_AT, now + input.delayMs);
    t.setOpt(s, DEADLINE_AT, deadlineAt);
    t.setNum(s, CREATED_AT, now);
    t.setNum(s, UPDATED_AT, now);
    t.setNum(s, LEASE_UNTIL, NaN);
    t.setNum(s, NEXT_POLL_AT, NaN);
    t.setNum(s, FINISHED_AT, NaN);
    t.setNum(s, SEQ, seq);
    t.setNum(s, Q_TOK, 0);
    t.setNum(s, D_TOK, 0);
    t.setNum(s, L_TOK, 0);
    t.setNum(s, P_TOK, 0);
    t.setInt(s, PRIORITY, input.priority);
    t.setInt(s, VERSION, 1);
    t.setInt(s, ATTEMPTS, 0);
    t.setInt(s, MAX_ATTEMPTS, input.maxAttempts);
    t.setInt(s, POLL_ERRORS, 0);
    t.setByte(s, SC, SC_PENDING);
    t.setByte(s, QUEUE, QUEUE_NONE);
    t.setByte(s, DEADLINE, DEADLINE_NONE);
    t.setByte(s, LEASE, LEASE_NONE);
    t.setByte(s, POLL, POLL_NONE);
    t.setByte(s, FLAGS, (input.idempotent ? F_IDEMPOTENT : 0) | (ranked ? F_RANKED : 0) | stored.flag);
    if (!this.tasks.add(input.id, s)) this.rejectTakenId(s, lane, batch, index);
    try {
      // after the id check: a refused id takes no fair tag
      t.setRef(s, POLICY, this.policy.forNew(s, seq, input.tenantId, input.priority, deadlineAt, input.boost, this.scheduler.limits));
    } catch (e) {
      // FairTagOverflowError (policy-state.ts): nothing of this task or its batch stays
      this.tasks.delete(input.id);
      t.release(s);
      if (lane.refs === 0) this.scheduler.releaseLane((lane.refs++, lane));
      this.undoBatch(batch, index);
      throw e;
    }
    lane.refs++;
    if (input.idempotencyKey !== null) this.byIdempotencyKey.set(input.idempotencyKey, { slot: s, fingerprint: scopeOf(input).payloadFingerprint });
    this.statusIndex.add(s, seq, SC_PENDING);
    this.counts.statusCounts[SC_PENDING]++;
    this.pending.enter(s, now);
    // the caller's own payload object goes back (it never reaches the store's state)
    return { task: t.toCreatedTask(s, p), created: true };
  }

  /** What the task holding an idempotency key was created with (for checkIdempotentBatch). */
  readonly storedScope = (key: string): (IdempotencyScope & { id: string }) | undefined => {
    const e = this.byIdempotencyKey.get(key);
    if (e === undefined) return undefined;
    const t = this.t;
    return { id: t.id(e.slot), type: t.ref<string>(e.slot, TYPE), tenantId: t.ref<LaneKeys>(e.slot, KEYS).tenantId, payloadFingerprint: e.fingerprint };
  };

  scan(): ScanContext {
    const policy = this.policy;
    return {
      t: this.t,
      statusIndex: this.statusIndex,
      order: this.order,
      agingIntervalMs: this.agingIntervalMs,
      buckets: this.counts.buckets,
      fair: policy.fair,
      tagOf: (s) => policy.tagNumber(s),
    };
  }

  assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /**
   * Input `end` of a create reused a taken id (a caller bug; ids are generated by the queue): the
   * id map kept the old slot. Free the new slot `s`, undo the tasks created by the earlier
   * inputs, and throw.
   */
  rejectTakenId(s: number, lane: Lane, out: CreateResult[] | undefined, end: number): never {
    const t = this.t;
    const id = t.id(s);
    t.release(s);
    if (lane.refs === 0) this.scheduler.releaseLane((lane.refs++, lane)); // a lane made for s alone
    this.undoBatch(out, end);
    throw new InvalidStateError(`Task id ${id} is already taken; nothing was created (all or none).`);
  }

  /** Undoes the tasks created by inputs 0 .. end - 1 of a failing create, and their fair tags. */
  private undoBatch(out: CreateResult[] | undefined, end: number): void {
    const t = this.t;
    for (let i = end - 1; out !== undefined && i >= 0; i--) {
      if (!out[i].created) continue;
      const x = this.tasks.get(out[i].task.id)!;
      const xl = t.ref<Lane>(x, LANE);
      this.pending.leave(x);
      this.statusIndex.remove(t.seq(x), t.byte(x, SC));
      this.counts.statusCounts[t.byte(x, SC)]--;
      this.tasks.delete(t.id(x));
      const key = t.ref<string | null>(x, IDEMPOTENCY_KEY);
      if (key !== null) this.byIdempotencyKey.delete(key);
      this.scheduler.releaseLane(xl);
      this.policy.drop(x);
      t.release(x);
    }
    this.policy.rollbackBatch();
  }

  /**
   * The slot of a fenced task. Lease ids end in `.<slot in base 36>` (setLease), so a holder's
   * own fence finds its slot without a lookup in the id map; the slot counts only when it holds
   * that very id (else, e.g. a foreign or forged lease id, the id map decides as usual).
   */
  fenced(fence: Fence): number {
    const t = this.t;
    let s = slotOfLease(fence.leaseId);
    if (s < 0 || s >= t.size || t.id(s) !== fence.id) {
      const found = this.tasks.get(fence.id);
      if (found === undefined) throw new TaskNotFoundError(fence.id);
      s = found;
    }
    if (t.ref<number | null>(s, LEASE_ID) === null || t.int(s, VERSION) !== fence.version || t.leaseId(s) !== fence.leaseId) throw new StaleLeaseError(fence.id);
    return s;
  }

  expectStatus(s: number, operation: string, ...codes: number[]): void {
    if (!codes.includes(this.t.byte(s, SC))) throw new InvalidStateError(Messages.invalidState(this.t.id(s), this.t.status(s), operation));
  }

  touch(s: number, now: number): void {
    const t = this.t;
    t.setInt(s, VERSION, t.int(s, VERSION) + 1);
    t.setNum(s, UPDATED_AT, now);
  }

  setStatus(s: number, sc: number, now: number): void {
    const t = this.t;
    const from = t.byte(s, SC);
    t.setByte(s, SC, sc);
    this.counts.statusCounts[from]--;
    this.counts.statusCounts[sc]++;
    this.statusIndex.move(t.seq(s), from, sc);
    this.touch(s, now);
    if (this.history_ !== null) this.history_.record(s, t.seq(s), from, sc, now, t.int(s, VERSION));
  }

  /** Due PENDING_SUBMIT tasks past their deadline become TIMED_OUT (no admission, no token). */
  timeOutDue(now: number): Task[] {
    const t = this.t;
    const heap = this.timers.dueDeadlines;
    const out: Task[] = [];
    for (let s = heap.top(); s !== undefined && t.num(s, DEADLINE_AT) <= now; s = heap.top()) {
      this.finish(s, SC_TIMED_OUT, now);
      out.push(t.toTask(s));
    }
    return out;
  }

  /** A PENDING_SUBMIT task takes another priority (changePriority, a boost): every index, re-tagged there, version + 1. */
  reprioritize(s: number, priority: number, now: number): void {
    this.pending.leave(s);
    this.t.setInt(s, PRIORITY, priority);
    this.policy.retag(s, priority, this.scheduler.limits);
    this.pending.enter(s, now);
    this.touch(s, now);
  }

  // ---- leases and the moves out of a claim

  /** The task left SUBMITTING / SUBMITTED / RUNNING: its slots go back to its limits. */
  freeSlots(lane: Lane): void {
    this.scheduler.freeSlots(lane);
    this.notify();
  }

  setLease(s: number, owner: string, leaseMs: number, now: number, kind: number): void {
    const t = this.t;
    this.timers.dropLease(s);
    t.setRef(s, LEASE_OWNER, owner);
    this.leaseCounter = (this.leaseCounter + 1) % LEASE_NUMBERS;
    t.setRef(s, LEASE_ID, this.leaseCounter);
    this.timers.pushLease(s, now + leaseMs, kind);
  }

  clearLease(s: number): void {
    const t = this.t;
    this.timers.dropLease(s);
    t.setRef(s, LEASE_OWNER, null);
    t.setRef(s, LEASE_ID, null);
    t.setNum(s, LEASE_UNTIL, NaN);
  }

  expirePollLease(s: number, now: number, out: Transition[]): void {
    const t = this.t;
    this.clearLease(s);
    const deadlineAt = t.num(s, DEADLINE_AT);
    if (deadlineAt <= now) {
      // (a NaN deadline compares false: no deadline)
      const from = t.status(s);
      this.finish(s, SC_TIMED_OUT, now);
      out.push({ task: t.toTask(s), from, to: t.status(s) });
      return;
    }
    this.touch(s, now);
    this.timers.placeInFlight(s);
  }

  /** A SUBMITTING task whose lease expired (port: recoverExpired): a failed attempt whatever comes next. */
  recoverSubmit(s: number, now: number): void {
    const t = this.t;
    const attempts = t.int(s, ATTEMPTS) + 1;
    t.setInt(s, ATTEMPTS, attempts);
    if (!t.flag(s, F_IDEMPOTENT)) this.finish(s, SC_SUBMIT_UNKNOWN, now);
    else if (t.flag(s, F_CANCEL_REQUESTED)) this.finish(s, SC_CANCELED, now);
    else if (t.num(s, DEADLINE_AT) <= now) this.finish(s, SC_TIMED_OUT, now);
    else if (attempts >= t.int(s, MAX_ATTEMPTS)) this.finish(s, SC_FAILED, now);
    else this.backToPending(s, now);
  }

  /** SUBMITTING -> PENDING_SUBMIT (retry, release, lost submit): slots freed, back in the order by its runAt. */
  backToPending(s: number, now: number): void {
    this.clearLease(s);
    this.setStatus(s, SC_PENDING, now);
    this.freeSlots(this.t.ref<Lane>(s, LANE));
    this.pending.enter(s, now);
  }

  /** Any non-terminal status -> terminal (code `sc`): out of every index, slots freed once, lease and nextPollAt cleared. */
  finish(s: number, sc: number, now: number): void {
    const t = this.t;
    const cur = t.byte(s, SC);
    const wasInFlight = inFlightCode(cur);
    if (cur === SC_PENDING) this.pending.leave(s);
    else {
      this.timers.putPoll(s, POLL_NONE);
      this.timers.putDeadline(s, DEADLINE_NONE);
      t.setNum(s, NEXT_POLL_AT, NaN);
    }
    this.clearLease(s);
    this.setStatus(s, sc, now);
    t.setNum(s, FINISHED_AT, now);
    this.finished.push(s, now, t.seq(s), t.seq(s));
    const lane = t.ref<Lane>(s, LANE);
    t.setRef(s, LANE, null);
    if (wasInFlight) this.freeSlots(lane);
    this.scheduler.releaseLane(lane);
  }

  notify(): void {
    this.wakes.notify();
  }
}

/** The slot at the end of a lease id made by setLease (`...<counter>.<slot>`, base 36), or -1. */
/**
 * Lease numbers wrap here (2^30: a Smi in every V8 build). A lease id is unique while its number
 * is: a number comes back for the same slot only after 2^30 more leases, and a fence must match
 * the task's version too, which changes with every write to the task.
 */
const LEASE_NUMBERS = 2 ** 30;

function slotOfLease(leaseId: unknown): number {
  if (typeof leaseId !== 'string') return -1;
  let slot = 0;
  let scale = 1;
  for (let i = leaseId.length - 1; i >= 0 && scale <= 36 ** 6; i--) {
    const c = leaseId.charCodeAt(i);
    if (c === 46 /* . */) return scale === 1 ? -1 : slot;
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 122 ? c - 87 : -1;
    if (d < 0) return -1;
    slot += d * scale;
    scale *= 36;
  }
  return -1;
}
