import { randomUUID } from 'node:crypto';
import {
  accountKey,
  effectiveBurst,
  emptyLimits,
  gcra,
  laneKey,
  type LimitUpdate,
  type LimitsSnapshot,
} from '../../core/admission';
import { InvalidStateError, StaleLeaseError, StoreClosedError, TaskNotFoundError } from '../../core/errors';
import { checkIdempotentBatch, scopeOf, type IdempotencyScope } from '../../core/idempotency';
import { explainTask, type AdmissionState, type TaskExplanation } from '../../core/explain';
import { DEFAULT_HISTORY_LIMIT, type TaskHistoryEntry } from '../../core/history';
import { Messages } from '../../core/messages';
import { isRetryable, requeuedDeadline } from '../../core/requeue';
import { searchPage, type TaskPage, type TaskQuery } from '../../core/task-query';
import { ALL_STATUSES, TaskStatus, type Fence, type NewTask, type Task, type TerminalStatus, type Transition } from '../../core/task';
import {
  systemClock,
  type ClaimRequest,
  type Clock,
  type CompletionOutcome,
  type CreateResult,
  type ListQuery,
  type PendingPriorityStats,
  type PollOutcome,
  type QueueStats,
  type RetryOutcome,
  type StoreOptions,
  type BoostedTask,
  type StorePolicies,
  type SubmissionClaim,
  type SubmittedOutcome,
  type TaskStore,
} from '../../core/task-store.port';
import { validateHistoryLimit, validateLimitUpdate, validateOrderOptions, validateTaskQuery } from '../../core/validation';
import { refuseWeights } from '../../core/policies';
import type { Fairness } from '../../core/fairness';
import { PolicyState } from './policy-state';
import { HistoryLog } from './history-log';
import { countAhead, nextCursorOf, queryPageSlots, type ScanContext } from './task-scan';
import { LANE_IDLE, LANE_PARKED, LANE_READY, Lane, LaneIndex, ProviderState, ReadyLanes, SlotState } from './lanes';
import {
  applyLimitUpdate,
  cloneLimits,
  effectiveAccountLimit,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
} from './limits-state';
import { orderMode, type OrderMode } from './order-mode';
import { BucketQueue } from './bucket-queue';
import { IdIndex } from './id-index';
import { FinishedHeap, SlotHeap } from './record-heaps';
import { StatusIndex } from './status-index';
import {
  ATTEMPTS,
  CREATED_AT,
  D_TOK,
  DEADLINE,
  DEADLINE_AT,
  DEADLINE_DUE,
  DEADLINE_NONE,
  DEADLINE_OTHER,
  ERROR,
  EXTERNAL_ID,
  F_CANCEL_REQUESTED,
  F_EXPIRED_LEASE,
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
  LEASE_POLL,
  LEASE_SUBMIT,
  LEASE_UNTIL,
  MAX_ATTEMPTS,
  NEXT_POLL_AT,
  P_TOK,
  PAYLOAD,
  POLICY,
  POLL,
  POLL_CANCEL,
  POLL_DUE,
  POLL_ERRORS,
  POLL_NONE,
  PRIORITY,
  Q_TOK,
  QUEUE,
  QUEUE_DELAYED,
  QUEUE_DUE,
  QUEUE_NONE,
  RESULT,
  RUN_AT,
  SC,
  SEQ,
  STATUS_CODE,
  STATUS_COUNT,
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

const SC_PENDING = STATUS_CODE[TaskStatus.PENDING_SUBMIT];
const SC_SUBMITTING = STATUS_CODE[TaskStatus.SUBMITTING];
const SC_SUBMITTED = STATUS_CODE[TaskStatus.SUBMITTED];
const SC_RUNNING = STATUS_CODE[TaskStatus.RUNNING];

const SC_FAILED = STATUS_CODE[TaskStatus.FAILED];
const SC_CANCELED = STATUS_CODE[TaskStatus.CANCELED];
const SC_TIMED_OUT = STATUS_CODE[TaskStatus.TIMED_OUT];
const SC_SUBMIT_UNKNOWN = STATUS_CODE[TaskStatus.SUBMIT_UNKNOWN];

function inFlightCode(sc: number): boolean {
  return sc === SC_SUBMITTING || sc === SC_SUBMITTED || sc === SC_RUNNING;
}

/** PENDING_SUBMIT tasks of one priority (stats): all of them, and the due ones by runAt. */
interface Bucket {
  count: number;
  due: number;
  readonly queue: BucketQueue;
}

/**
 * The embedded default TaskStore: everything in this process's memory, one event loop, so every
 * operation is atomic without locks. Implements the lane design of LANES.md:
 *
 * - each lane (tasks sharing all admission keys) keeps its due tasks in a heap by order key;
 * - READY lanes sit in a heap by head key; a claim takes the best lane, checks its limits and
 *   either takes its head or PARKS the lane on the first refusing resource (paused provider,
 *   rate, account, tenant, concurrency key) — so each refusal costs one O(log n) step per lane,
 *   never one step per refused task, and the task taken is always the first admissible one;
 * - parked lanes return to READY when their resource frees (slot freed, limit changed, provider
 *   resumed, rate token due);
 * - delayed tasks wait in a heap by runAt and move into their lane when due; polls, leases,
 *   deadlines and finished tasks each have a heap by time, so no operation scans the backlog.
 *
 * Tasks live in the slots of a TaskTable (task-table.ts): numbers in typed arrays, so that a
 * million tasks are not a million record objects for the garbage collector. Returned tasks are
 * fresh objects: object payloads and results are kept as JSON text and parsed for each copy, so
 * mutating a returned task or an input never changes the store.
 */
export class MemoryTaskStore implements TaskStore {
  readonly agingIntervalMs: number;
  /** DESIGN §7 fair share (fixed for the store's life) and deadline boosts: policy-state.ts. */
  readonly fairness: Fairness | null;
  readonly policies: StorePolicies = { fairness: true, boost: true };
  /** Queue name in messages (memoryStore() gives it). */
  private readonly queue: string;
  private readonly policy: PolicyState;
  private readonly clock: Clock;
  private readonly order: OrderMode;
  private closed = false;

  private readonly t = new TaskTable(randomUUID().slice(0, 8) + '-');
  /** Slot of each task id. */
  private readonly tasks = new IdIndex();
  /** Slot of the task holding each idempotency key, and the fingerprint of its payload (core/idempotency.ts). */
  private readonly byIdempotencyKey = new Map<string, { slot: number; fingerprint: string }>();
  private readonly statusIndex = new StatusIndex();
  private readonly statusCounts: number[] = new Array<number>(STATUS_COUNT).fill(0);
  private seq = 0;
  /** Latest createdAt so far (creation ranks, see order-mode.ts). */
  private maxCreatedAt = -Infinity;
  private token = 0;
  /** Number of the last lease handed out (task-table.ts LEASE_ID), below LEASE_NUMBERS. */
  private leaseCounter = 0;
  /** Heap tie-break of two slots whose inline keys tie (order-mode.ts). */
  private readonly tie: (a: number, b: number) => number;

  private limits: LimitsSnapshot = emptyLimits();
  private readonly lanes = new LaneIndex();
  private readonly ready: ReadyLanes;
  private readonly providers = new Map<string, ProviderState>();
  private readonly accounts = new Map<string, SlotState>();
  private readonly tenants = new Map<string, SlotState>();
  private readonly ckeys = new Map<string, SlotState>();
  /** Providers with rate-parked lanes, waiting for their retryAt. */
  private readonly rateParked = new Set<ProviderState>();

  private readonly delayed: SlotHeap;
  private readonly buckets = new Map<number, Bucket>();
  private readonly dueDeadlines: SlotHeap;
  private readonly otherDeadlines: SlotHeap;
  private readonly submitLeases: SlotHeap;
  private readonly pollLeases: SlotHeap;
  private readonly pollsDue: SlotHeap;
  private readonly pollsCanceled: SlotHeap;
  /** SUBMITTED / RUNNING tasks whose poll lease expired (seen by claimPolls) but is not cleared yet. */
  private readonly expiredPollLeases = new Set<number>();
  private readonly finished = new FinishedHeap();

  private readonly listeners = new Set<() => void>();
  private notifyPending = false;
  readonly historyLimit: number;
  /** Per-task history (history-log.ts); null when historyLimit is 0. */
  private readonly history_: HistoryLog | null;

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
    this.tie = (a, b) => orderTie(t.orderFields(a), t.orderFields(b));
    this.ready = new ReadyLanes(this.tie);
    this.delayed = new SlotHeap(t, Q_TOK);
    this.dueDeadlines = new SlotHeap(t, D_TOK);
    this.otherDeadlines = new SlotHeap(t, D_TOK);
    this.submitLeases = new SlotHeap(t, L_TOK);
    this.pollLeases = new SlotHeap(t, L_TOK);
    this.pollsDue = new SlotHeap(t, P_TOK);
    this.pollsCanceled = new SlotHeap(t, P_TOK);
    this.history_ = historyLimit > 0 ? new HistoryLog(t, historyLimit) : null;
  }

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

  /** Creates one task (or finds its idempotency key) at `now`; `batch` and `index` for the all-or-none undo. */
  private insert(input: NewTask, now: number, batch: CreateResult[] | undefined, index: number): CreateResult {
    const t = this.t;
    if (input.idempotencyKey !== null) {
      const existing = this.byIdempotencyKey.get(input.idempotencyKey);
      if (existing !== undefined) return { task: t.toTask(existing.slot), created: false };
    }
    const lane = this.laneOf(input);
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
      t.setRef(s, POLICY, this.policy.forNew(s, seq, input.tenantId, input.priority, deadlineAt, input.boost, this.limits));
    } catch (e) {
      // FairTagOverflowError (policy-state.ts): nothing of this task or its batch stays
      this.tasks.delete(input.id);
      t.release(s);
      if (lane.refs === 0) this.releaseLane((lane.refs++, lane));
      this.undoBatch(batch, index);
      throw e;
    }
    lane.refs++;
    if (input.idempotencyKey !== null) this.byIdempotencyKey.set(input.idempotencyKey, { slot: s, fingerprint: scopeOf(input).payloadFingerprint });
    this.statusIndex.add(s, seq, SC_PENDING);
    this.statusCounts[SC_PENDING]++;
    this.enterPending(s, now);
    // the caller's own payload object goes back (it never reaches the store's state)
    return { task: t.toCreatedTask(s, p), created: true };
  }

  /** What the task holding an idempotency key was created with (for checkIdempotentBatch). */
  private readonly storedScope = (key: string): (IdempotencyScope & { id: string }) | undefined => {
    const e = this.byIdempotencyKey.get(key);
    if (e === undefined) return undefined;
    const t = this.t;
    return { id: t.id(e.slot), type: t.ref<string>(e.slot, TYPE), tenantId: t.ref<LaneKeys>(e.slot, KEYS).tenantId, payloadFingerprint: e.fingerprint };
  };

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
    this.promote(now);
    const timedOut = this.timeOutDue(now);
    const slots: number[] = [];
    const tokens: number[] = [];
    while (slots.length < request.limit) {
      const lane = this.ready.peek();
      if (lane === undefined) break;
      const p = lane.provider;
      if (p.paused) {
        this.park(lane, p.pausedLanes);
        continue;
      }
      let tat = 0;
      if (p.qps !== null) {
        const d = gcra(p.tat, now, p.qps, effectiveBurst(p));
        if (!d.allowed) {
          p.retryAt = d.retryAt;
          this.rateParked.add(p);
          this.park(lane, p.rateLanes);
          continue;
        }
        tat = d.tat;
      }
      const blocked = this.fullSlot(lane);
      if (blocked !== null) {
        this.park(lane, blocked.parked);
        continue;
      }
      if (p.qps !== null) p.tat = tat;
      // the head leaves its lane now (the next head may be claimed next); the rest of its
      // pending state (bucket, token, deadline) below, without reading the task here
      slots.push(lane.head);
      tokens.push(lane.heap.topToken());
      lane.heap.pop();
      lane.live--;
      this.refreshLane(lane);
      this.takeSlots(lane);
    }
    // the rest of each claim only writes the task and copies it out: read the fields of all of
    // them first in one tight loop, so that their cache misses overlap instead of stalling one
    // task after the other (with a million tasks, each one's fields are far from the last's)
    this.t.prefetch(slots);
    let sink = 0;
    for (let i = 0; i < slots.length; i++) sink += this.statusIndex.peek(this.t.seq(slots[i]), SC_PENDING); // likewise
    this.t.sink += sink;
    const claimed = new Array<Task>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      this.leaveBucket(s, tokens[i]);
      this.policy.claimed(s);
      this.setStatus(s, SC_SUBMITTING, now);
      this.setLease(s, request.owner, request.leaseMs, now, LEASE_SUBMIT);
      claimed[i] = this.t.toTask(s);
    }
    const out: SubmissionClaim = { claimed, timedOut, nextWakeAt: this.nextWakeAt() };
    if (boosted.length > 0) out.boosted = boosted;
    return out;
  }

  async claimPolls(request: ClaimRequest): Promise<Task[]> {
    this.assertOpen();
    const t = this.t;
    const now = this.clock.now();
    this.noticeExpiredPollLeases(now);
    const out: Task[] = [];
    while (out.length < request.limit) {
      let due = this.pollsDue.top();
      if (due !== undefined && t.num(due, NEXT_POLL_AT) > now) due = undefined;
      const canceled = this.pollsCanceled.top();
      let s: number | undefined;
      if (due !== undefined && canceled !== undefined) {
        const a = t.num(due, NEXT_POLL_AT);
        const b = t.num(canceled, NEXT_POLL_AT);
        s = a < b || (a === b && t.seq(due) < t.seq(canceled)) ? due : canceled;
      } else s = due ?? canceled;
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
    this.dropLeaseEntry(s);
    this.pushLease(s, now + leaseMs, this.t.byte(s, SC) === SC_SUBMITTING ? LEASE_SUBMIT : LEASE_POLL);
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
    this.placeInFlight(s);
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
    this.placeInFlight(s);
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
    for (let s = this.submitLeases.top(); n < limit && s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.submitLeases.top()) {
      n++;
      const from = t.status(s);
      this.recoverSubmit(s, now);
      out.push({ task: t.toTask(s), from, to: t.status(s) });
    }
    // lost polls: the lease is cleared, the poll will be claimed again (or the deadline applies)
    for (let s = this.pollLeases.top(); n < limit && s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.pollLeases.top()) {
      n++;
      this.expirePollLease(s, now, out);
    }
    for (const s of this.expiredPollLeases) {
      if (n >= limit) break;
      n++;
      this.expirePollLease(s, now, out);
    }
    // deadlines of tasks without a live lease
    for (const heap of [this.dueDeadlines, this.otherDeadlines]) {
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
      this.statusCounts[sc]--;
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
      if (t.byte(s, POLL) === POLL_DUE) this.putPoll(s, POLL_CANCEL);
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

  /** A PENDING_SUBMIT task takes another priority (changePriority, a boost): every index, re-tagged there, version + 1. */
  private reprioritize(s: number, priority: number, now: number): void {
    this.leavePending(s);
    this.t.setInt(s, PRIORITY, priority);
    this.policy.retag(s, priority, this.limits);
    this.enterPending(s, now);
    this.touch(s, now);
  }

  async stats(): Promise<QueueStats> {
    this.assertOpen();
    const now = this.clock.now();
    this.promote(now);
    const byStatus = {} as Record<TaskStatus, number>;
    for (const st of ALL_STATUSES) byStatus[st] = this.statusCounts[STATUS_CODE[st]];
    const pending: PendingPriorityStats[] = [];
    for (const [priority, b] of this.buckets) {
      const oldest = b.due > 0 ? b.queue.top() : undefined;
      pending.push({ priority, count: b.count, oldestWaitMs: oldest === undefined ? 0 : now - this.t.num(oldest, RUN_AT) });
    }
    pending.sort((a, b) => b.priority - a.priority);
    const inFlightByProvider: Record<string, number> = {};
    for (const p of this.providers.values()) if (p.inFlight > 0) inFlightByProvider[p.key] = p.inFlight;
    const inFlightByAccount: QueueStats['inFlightByAccount'] = [];
    for (const a of this.accounts.values()) {
      if (a.inFlight > 0) inFlightByAccount.push({ providerKey: a.providerKey!, accountId: a.accountId!, count: a.inFlight });
    }
    return {
      now,
      byStatus,
      pending,
      inFlightByProvider,
      inFlightByAccount,
      inFlightByTenant: countsOf(this.tenants),
      inFlightByConcurrencyKey: countsOf(this.ckeys),
    };
  }

  async getLimits(): Promise<LimitsSnapshot> {
    this.assertOpen();
    return cloneLimits(this.limits);
  }

  async setLimits(update: LimitUpdate): Promise<LimitsSnapshot> {
    this.assertOpen();
    validateLimitUpdate(update);
    refuseWeights('MemoryTaskStore', this.policies, update, this.fairness, this.queue);
    applyLimitUpdate(this.limits, update);
    switch (update.kind) {
      case 'provider': {
        const p = this.providers.get(update.providerKey);
        if (p !== undefined) this.refreshProvider(p);
        break;
      }
      case 'account': {
        const a = this.accounts.get(accountKey(update.providerKey, update.accountId));
        if (a !== undefined) this.refreshAccount(a);
        break;
      }
      case 'tenant': {
        const tn = this.tenants.get(update.tenantId);
        if (tn !== undefined) this.refreshSlot(tn, effectiveTenantQuota(this.limits, tn.key));
        break;
      }
      case 'defaultTenant':
        for (const tn of this.tenants.values()) this.refreshSlot(tn, effectiveTenantQuota(this.limits, tn.key));
        break;
      case 'concurrencyKey': {
        const k = this.ckeys.get(update.key);
        if (k !== undefined) this.refreshSlot(k, effectiveConcurrencyKeyLimit(this.limits, k.key));
        break;
      }
    }
    this.notify();
    return cloneLimits(this.limits);
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
    const lane = this.laneOf(t.ref<LaneKeys>(s, KEYS));
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
    this.enterPending(s, now);
    this.notify();
    return { task: t.toTask(s), from, to: TaskStatus.PENDING_SUBMIT };
  }

  async explain(id: string): Promise<TaskExplanation> {
    this.assertOpen();
    const s = this.tasks.get(id);
    if (s === undefined) throw new TaskNotFoundError(id);
    const now = this.clock.now();
    this.promote(now); // due delayed tasks into their buckets (countAhead reads them), as a claim would
    const tat: Record<string, number> = {};
    for (const p of this.providers.values()) tat[p.key] = p.tat;
    const accounts: Record<string, number> = {};
    for (const a of this.accounts.values()) accounts[a.key] = a.inFlight;
    const state: AdmissionState = { limits: this.limits, tat, accounts, tenants: countsOf(this.tenants), concurrencyKeys: countsOf(this.ckeys) };
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
    this.promote(now); // due delayed tasks into their buckets, as a claim or stats() would
    const c = this.scan();
    const slots = queryPageSlots(c, q, now);
    const nextCursor = nextCursorOf(c, q, slots, now);
    return { tasks: slots.slice(0, q.limit).map((s) => this.t.toTask(s)), nextCursor };
  }

  private scan(): ScanContext {
    const policy = this.policy;
    return { t: this.t, statusIndex: this.statusIndex, order: this.order, agingIntervalMs: this.agingIntervalMs, buckets: this.buckets, fair: policy.fair, tagOf: (s) => policy.tagNumber(s) };
  }

  // ================================================================ internals

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /**
   * Input `end` of a create reused a taken id (a caller bug; ids are generated by the queue): the
   * id map kept the old slot. Free the new slot `s`, undo the tasks created by the earlier
   * inputs, and throw.
   */
  private rejectTakenId(s: number, lane: Lane, out: CreateResult[] | undefined, end: number): never {
    const t = this.t;
    const id = t.id(s);
    t.release(s);
    if (lane.refs === 0) this.releaseLane((lane.refs++, lane)); // a lane made for s alone
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
      this.leavePending(x);
      this.statusIndex.remove(t.seq(x), t.byte(x, SC));
      this.statusCounts[t.byte(x, SC)]--;
      this.tasks.delete(t.id(x));
      const key = t.ref<string | null>(x, IDEMPOTENCY_KEY);
      if (key !== null) this.byIdempotencyKey.delete(key);
      this.releaseLane(xl);
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
  private fenced(fence: Fence): number {
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

  private expectStatus(s: number, operation: string, ...codes: number[]): void {
    if (!codes.includes(this.t.byte(s, SC))) throw new InvalidStateError(Messages.invalidState(this.t.id(s), this.t.status(s), operation));
  }

  private touch(s: number, now: number): void {
    const t = this.t;
    t.setInt(s, VERSION, t.int(s, VERSION) + 1);
    t.setNum(s, UPDATED_AT, now);
  }

  private setStatus(s: number, sc: number, now: number): void {
    const t = this.t;
    const from = t.byte(s, SC);
    t.setByte(s, SC, sc);
    this.statusCounts[from]--;
    this.statusCounts[sc]++;
    this.statusIndex.move(t.seq(s), from, sc);
    this.touch(s, now);
    if (this.history_ !== null) this.history_.record(s, t.seq(s), from, sc, now, t.int(s, VERSION));
  }

  private nextToken(): number {
    return ++this.token;
  }

  // ---- lanes and resources

  private laneOf(nt: LaneKeys): Lane {
    let lane = this.lanes.get(nt.providerKey, nt.accountId, nt.tenantId, nt.concurrencyKey);
    if (lane === undefined) {
      const provider = this.providerOf(nt.providerKey);
      let account: SlotState | null = null;
      if (nt.accountId !== null) {
        const ak = accountKey(nt.providerKey, nt.accountId);
        account = this.accounts.get(ak) ?? null;
        if (account === null) {
          account = new SlotState(ak, nt.providerKey, nt.accountId);
          account.limit = effectiveAccountLimit(this.limits, nt.providerKey, nt.accountId);
          this.accounts.set(ak, account);
          provider.accounts.add(account);
        }
        account.refs++;
      }
      const tenant = nt.tenantId === null ? null : this.slotOf(this.tenants, nt.tenantId, (k) => effectiveTenantQuota(this.limits, k));
      const ckey = nt.concurrencyKey === null ? null : this.slotOf(this.ckeys, nt.concurrencyKey, (k) => effectiveConcurrencyKeyLimit(this.limits, k));
      const keys = { providerKey: nt.providerKey, accountId: nt.accountId, tenantId: nt.tenantId, concurrencyKey: nt.concurrencyKey };
      lane = new Lane(laneKey(nt), nt.accountId, nt.tenantId, nt.concurrencyKey, provider, account, tenant, ckey, keys, this.t, this.tie);
      this.lanes.add(lane);
    }
    return lane;
  }

  private providerOf(key: string): ProviderState {
    let p = this.providers.get(key);
    if (p === undefined) {
      p = new ProviderState(key);
      const l = this.limits.providers[key];
      if (l !== undefined) Object.assign(p, { paused: l.paused, qps: l.qps, burst: l.burst, accountConcurrency: l.accountConcurrency });
      this.providers.set(key, p);
    }
    return p;
  }

  private slotOf(map: Map<string, SlotState>, key: string, limitOf: (key: string) => number | null): SlotState {
    let st = map.get(key);
    if (st === undefined) {
      st = new SlotState(key);
      st.limit = limitOf(key);
      map.set(key, st);
    }
    st.refs++;
    return st;
  }

  /** A task of the lane became terminal: drop the lane (and unused resources) when it was the last. */
  private releaseLane(lane: Lane): void {
    if (--lane.refs > 0) return;
    this.lanes.delete(lane);
    if (lane.account !== null && --lane.account.refs === 0) {
      this.accounts.delete(lane.account.key);
      lane.provider.accounts.delete(lane.account);
    }
    if (lane.tenant !== null && --lane.tenant.refs === 0) this.tenants.delete(lane.tenant.key);
    if (lane.ckey !== null && --lane.ckey.refs === 0) this.ckeys.delete(lane.ckey.key);
  }

  /** The first full slot resource of the lane, in the order account, tenant, concurrency key. */
  private fullSlot(lane: Lane): SlotState | null {
    const a = lane.account;
    if (a !== null && a.limit !== null && a.inFlight >= a.limit) return a;
    const tn = lane.tenant;
    if (tn !== null && tn.limit !== null && tn.inFlight >= tn.limit) return tn;
    const k = lane.ckey;
    if (k !== null && k.limit !== null && k.inFlight >= k.limit) return k;
    return null;
  }

  private takeSlots(lane: Lane): void {
    lane.provider.inFlight++;
    if (lane.account !== null) lane.account.inFlight++;
    if (lane.tenant !== null) lane.tenant.inFlight++;
    if (lane.ckey !== null) lane.ckey.inFlight++;
  }

  /** The task left SUBMITTING / SUBMITTED / RUNNING: free its slots, re-ready lanes waiting on them. */
  private freeSlots(lane: Lane): void {
    lane.provider.inFlight--;
    if (lane.account !== null) this.freeSlot(lane.account);
    if (lane.tenant !== null) this.freeSlot(lane.tenant);
    if (lane.ckey !== null) this.freeSlot(lane.ckey);
    this.notify();
  }

  private freeSlot(st: SlotState): void {
    st.inFlight--;
    if (st.parked.size > 0 && st.hasRoom()) this.unpark(st.parked);
  }

  private park(lane: Lane, set: Set<Lane>): void {
    this.ready.remove(lane);
    lane.state = LANE_PARKED;
    lane.parkedIn = set;
    set.add(lane);
  }

  private unpark(set: Set<Lane>): void {
    for (const lane of set) {
      lane.parkedIn = null;
      lane.state = LANE_READY;
      this.ready.push(lane);
    }
    set.clear();
  }

  /** Re-reads the lane's head after its heap changed; moves it between IDLE and READY. */
  private refreshLane(lane: Lane): void {
    const head = lane.heap.top();
    if (head === undefined) {
      if (lane.state === LANE_READY) this.ready.remove(lane);
      else if (lane.state === LANE_PARKED) {
        lane.parkedIn!.delete(lane);
        lane.parkedIn = null;
      }
      lane.state = LANE_IDLE;
      lane.head = -1;
      return;
    }
    lane.head = head;
    lane.hk1 = lane.heap.topK1();
    lane.hk2 = lane.heap.topK2();
    lane.hk3 = lane.heap.topK3();
    lane.hrank = lane.heap.topRank();
    if (lane.state === LANE_READY) this.ready.update(lane);
    else if (lane.state === LANE_IDLE) {
      lane.state = LANE_READY;
      this.ready.push(lane);
    }
  }

  private refreshProvider(p: ProviderState): void {
    const l = this.limits.providers[p.key];
    p.paused = l.paused;
    p.qps = l.qps;
    p.burst = l.burst;
    p.accountConcurrency = l.accountConcurrency;
    if (!p.paused && p.pausedLanes.size > 0) this.unpark(p.pausedLanes);
    // a changed rate or burst may admit at once: let the rate-parked lanes try again
    if (p.rateLanes.size > 0) this.unpark(p.rateLanes);
    this.rateParked.delete(p);
    for (const a of p.accounts) this.refreshAccount(a);
  }

  private refreshAccount(a: SlotState): void {
    this.refreshSlot(a, effectiveAccountLimit(this.limits, a.providerKey!, a.accountId!));
  }

  private refreshSlot(st: SlotState, limit: number | null): void {
    st.limit = limit;
    if (st.parked.size > 0 && st.hasRoom()) this.unpark(st.parked);
  }

  // ---- pending tasks: lanes, delayed heap, priority buckets

  private enterPending(s: number, now: number): void {
    const t = this.t;
    const priority = t.int(s, PRIORITY);
    let b = this.buckets.get(priority);
    if (b === undefined) {
      b = { count: 0, due: 0, queue: new BucketQueue(t) };
      this.buckets.set(priority, b);
    }
    b.count++;
    const runAt = t.num(s, RUN_AT);
    if (runAt <= now) this.enterDue(s, b);
    else {
      t.setByte(s, QUEUE, QUEUE_DELAYED);
      const tok = this.nextToken();
      t.setNum(s, Q_TOK, tok);
      this.delayed.push(s, runAt, t.seq(s), tok);
      this.putDeadline(s, DEADLINE_OTHER);
    }
  }

  private enterDue(s: number, b: Bucket): void {
    const t = this.t;
    const lane = t.ref<Lane>(s, LANE);
    t.setByte(s, QUEUE, QUEUE_DUE);
    const tok = this.nextToken();
    t.setNum(s, Q_TOK, tok);
    const o = this.order;
    const p = t.int(s, PRIORITY);
    const runAt = t.num(s, RUN_AT);
    const seq = t.seq(s);
    const tag = this.policy.tagNumber(s);
    lane.heap.push(s, o.k1(p, runAt, tag), o.k2(p, runAt, tag), tok, o.k3(p, runAt, tag), o.usesRank && t.flag(s, F_RANKED) ? seq : 0);
    lane.live++;
    b.queue.push(s, runAt, seq, tok);
    b.due++;
    this.putDeadline(s, DEADLINE_DUE);
    this.refreshLane(lane);
  }

  /** The task stops being PENDING_SUBMIT (claimed, canceled, timed out) or is re-keyed. */
  private leavePending(s: number): void {
    const t = this.t;
    const priority = t.int(s, PRIORITY);
    const b = this.buckets.get(priority)!;
    const q = t.byte(s, QUEUE);
    if (q === QUEUE_DUE) {
      const lane = t.ref<Lane>(s, LANE);
      const tok = t.num(s, Q_TOK);
      t.setNum(s, Q_TOK, 0);
      // a claimed task is its lane's head and usually its bucket's oldest: both drop it at once
      lane.heap.removeLive(s, tok);
      lane.live--;
      b.queue.removeLive(s, tok);
      b.due--;
      this.refreshLane(lane);
    } else if (q === QUEUE_DELAYED) {
      t.setNum(s, Q_TOK, 0);
      this.delayed.noteRemoved();
    }
    t.setByte(s, QUEUE, QUEUE_NONE);
    if (--b.count === 0) this.buckets.delete(priority);
    this.putDeadline(s, DEADLINE_NONE);
  }

  /** leavePending of a claimed head once it left its lane (claimSubmissions): bucket, token, deadline. */
  private leaveBucket(s: number, tok: number): void {
    const t = this.t;
    const priority = t.int(s, PRIORITY);
    const b = this.buckets.get(priority)!;
    t.setNum(s, Q_TOK, 0);
    b.queue.removeLive(s, tok);
    b.due--;
    t.setByte(s, QUEUE, QUEUE_NONE);
    if (--b.count === 0) this.buckets.delete(priority);
    this.putDeadline(s, DEADLINE_NONE);
  }

  /** Moves due delayed tasks into their lanes and re-readies rate-parked lanes whose token is due. */
  private promote(now: number): void {
    const t = this.t;
    for (let s = this.delayed.top(); s !== undefined && t.num(s, RUN_AT) <= now; s = this.delayed.top()) {
      this.delayed.pop();
      t.setNum(s, Q_TOK, 0);
      this.enterDue(s, this.buckets.get(t.int(s, PRIORITY))!);
    }
    if (this.rateParked.size > 0) {
      for (const p of this.rateParked) {
        if (now >= p.retryAt) {
          this.rateParked.delete(p);
          this.unpark(p.rateLanes);
        }
      }
    }
  }

  /** Due PENDING_SUBMIT tasks past their deadline become TIMED_OUT (no admission, no token). */
  private timeOutDue(now: number): Task[] {
    const t = this.t;
    const out: Task[] = [];
    for (let s = this.dueDeadlines.top(); s !== undefined && t.num(s, DEADLINE_AT) <= now; s = this.dueDeadlines.top()) {
      this.finish(s, SC_TIMED_OUT, now);
      out.push(t.toTask(s));
    }
    return out;
  }

  private nextWakeAt(): number | null {
    let at: number | null = null;
    const d = this.delayed.top();
    if (d !== undefined) at = this.t.num(d, RUN_AT);
    for (const p of this.rateParked) {
      if (p.rateLanes.size === 0) continue;
      const r = Math.ceil(p.retryAt);
      if (at === null || r < at) at = r;
    }
    return at;
  }

  // ---- in-flight tasks: leases, polls, deadlines

  private putDeadline(s: number, where: number): void {
    const t = this.t;
    const at = t.num(s, DEADLINE_AT);
    const cur = t.byte(s, DEADLINE);
    if (at !== at || cur === where) return; // no deadline (NaN), or already there
    if (cur !== DEADLINE_NONE) {
      t.setNum(s, D_TOK, 0);
      (cur === DEADLINE_DUE ? this.dueDeadlines : this.otherDeadlines).noteRemoved();
    }
    t.setByte(s, DEADLINE, where);
    if (where !== DEADLINE_NONE) {
      const tok = this.nextToken();
      t.setNum(s, D_TOK, tok);
      (where === DEADLINE_DUE ? this.dueDeadlines : this.otherDeadlines).push(s, at, t.seq(s), tok);
    }
  }

  private putPoll(s: number, where: number): void {
    const t = this.t;
    const cur = t.byte(s, POLL);
    if (cur === where) return;
    if (cur !== POLL_NONE) {
      t.setNum(s, P_TOK, 0);
      (cur === POLL_DUE ? this.pollsDue : this.pollsCanceled).noteRemoved();
    }
    t.setByte(s, POLL, where);
    if (where !== POLL_NONE) {
      const tok = this.nextToken();
      t.setNum(s, P_TOK, tok);
      (where === POLL_DUE ? this.pollsDue : this.pollsCanceled).push(s, t.num(s, NEXT_POLL_AT), t.seq(s), tok);
    }
  }

  /** SUBMITTED / RUNNING without a live lease: waits for its poll (or its cancel) and its deadline. */
  private placeInFlight(s: number): void {
    this.putPoll(s, this.t.flag(s, F_CANCEL_REQUESTED) ? POLL_CANCEL : POLL_DUE);
    this.putDeadline(s, DEADLINE_OTHER);
  }

  private dropLeaseEntry(s: number): void {
    const t = this.t;
    const lease = t.byte(s, LEASE);
    if (lease !== LEASE_NONE) {
      t.setNum(s, L_TOK, 0);
      (lease === LEASE_SUBMIT ? this.submitLeases : this.pollLeases).noteRemoved();
      t.setByte(s, LEASE, LEASE_NONE);
    }
    if (t.flag(s, F_EXPIRED_LEASE)) {
      t.setFlag(s, F_EXPIRED_LEASE, false);
      this.expiredPollLeases.delete(s);
    }
  }

  private pushLease(s: number, until: number, kind: number): void {
    const t = this.t;
    t.setNum(s, LEASE_UNTIL, until);
    t.setByte(s, LEASE, kind);
    const tok = this.nextToken();
    t.setNum(s, L_TOK, tok);
    (kind === LEASE_SUBMIT ? this.submitLeases : this.pollLeases).push(s, until, t.seq(s), tok);
    // a live lease takes the task out of the poll and deadline heaps
    this.putPoll(s, POLL_NONE);
    this.putDeadline(s, DEADLINE_NONE);
  }

  private setLease(s: number, owner: string, leaseMs: number, now: number, kind: number): void {
    const t = this.t;
    this.dropLeaseEntry(s);
    t.setRef(s, LEASE_OWNER, owner);
    this.leaseCounter = (this.leaseCounter + 1) % LEASE_NUMBERS;
    t.setRef(s, LEASE_ID, this.leaseCounter);
    this.pushLease(s, now + leaseMs, kind);
  }

  private clearLease(s: number): void {
    const t = this.t;
    this.dropLeaseEntry(s);
    t.setRef(s, LEASE_OWNER, null);
    t.setRef(s, LEASE_ID, null);
    t.setNum(s, LEASE_UNTIL, NaN);
  }

  /**
   * claimPolls may take SUBMITTED / RUNNING tasks whose lease expired but was not cleared yet:
   * they move from the poll-lease heap to the poll heaps (lease fields untouched; the old holder
   * stays valid until someone else claims or recoverExpired clears it).
   */
  private noticeExpiredPollLeases(now: number): void {
    const t = this.t;
    for (let s = this.pollLeases.top(); s !== undefined && t.num(s, LEASE_UNTIL) <= now; s = this.pollLeases.top()) {
      this.pollLeases.pop();
      t.setNum(s, L_TOK, 0);
      t.setByte(s, LEASE, LEASE_NONE);
      t.setFlag(s, F_EXPIRED_LEASE, true);
      this.expiredPollLeases.add(s);
      this.placeInFlight(s);
    }
  }

  private expirePollLease(s: number, now: number, out: Transition[]): void {
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
    this.placeInFlight(s);
  }

  /** A SUBMITTING task whose lease expired (port: recoverExpired): a failed attempt whatever comes next. */
  private recoverSubmit(s: number, now: number): void {
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
  private backToPending(s: number, now: number): void {
    this.clearLease(s);
    this.setStatus(s, SC_PENDING, now);
    this.freeSlots(this.t.ref<Lane>(s, LANE));
    this.enterPending(s, now);
  }

  /** Any non-terminal status -> terminal (code `sc`): out of every index, slots freed once, lease and nextPollAt cleared. */
  private finish(s: number, sc: number, now: number): void {
    const t = this.t;
    const cur = t.byte(s, SC);
    const wasInFlight = inFlightCode(cur);
    if (cur === SC_PENDING) this.leavePending(s);
    else {
      this.putPoll(s, POLL_NONE);
      this.putDeadline(s, DEADLINE_NONE);
      t.setNum(s, NEXT_POLL_AT, NaN);
    }
    this.clearLease(s);
    this.setStatus(s, sc, now);
    t.setNum(s, FINISHED_AT, now);
    this.finished.push(s, now, t.seq(s), 1);
    const lane = t.ref<Lane>(s, LANE);
    t.setRef(s, LANE, null);
    if (wasInFlight) this.freeSlots(lane);
    this.releaseLane(lane);
  }

  private notify(): void {
    if (this.notifyPending || this.listeners.size === 0) return;
    this.notifyPending = true;
    setImmediate(() => {
      this.notifyPending = false;
      for (const l of [...this.listeners]) {
        try {
          l();
        } catch {
          // a listener's failure is its own; the store goes on
        }
      }
    });
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

function countsOf(map: Map<string, SlotState>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const st of map.values()) if (st.inFlight > 0) out[st.key] = st.inFlight;
  return out;
}
