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
import { Messages } from '../../core/messages';
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
  type SubmissionClaim,
  type SubmittedOutcome,
  type TaskStore,
} from '../../core/task-store.port';
import { validateAgingInterval, validateLimitUpdate } from '../../core/validation';
import { LANE_IDLE, LANE_PARKED, LANE_READY, Lane, LaneIndex, ProviderState, ReadyLanes, SlotState } from './lanes';
import {
  applyLimitUpdate,
  cloneLimits,
  effectiveAccountLimit,
  effectiveConcurrencyKeyLimit,
  effectiveTenantQuota,
} from './limits-state';
import { orderMode, type OrderMode } from './order-mode';
import { BucketHeap, DeadlineHeap, FinishedHeap, LeaseHeap, PollHeap, QueueHeap } from './record-heaps';
import { StatusIndex } from './status-index';
import {
  DEADLINE_DUE,
  DEADLINE_NONE,
  DEADLINE_OTHER,
  LEASE_NONE,
  LEASE_POLL,
  LEASE_SUBMIT,
  POLL_CANCEL,
  POLL_DUE,
  POLL_NONE,
  QUEUE_DELAYED,
  QUEUE_DUE,
  QUEUE_NONE,
  STATUS_CODE,
  STATUS_COUNT,
  newRecord,
  setResult,
  toCreatedTask,
  type TaskRecord,
  toTask,
} from './task-record';

const SC_PENDING = STATUS_CODE[TaskStatus.PENDING_SUBMIT];
const SC_SUBMITTING = STATUS_CODE[TaskStatus.SUBMITTING];
const SC_SUBMITTED = STATUS_CODE[TaskStatus.SUBMITTED];
const SC_RUNNING = STATUS_CODE[TaskStatus.RUNNING];

function inFlightCode(sc: number): boolean {
  return sc === SC_SUBMITTING || sc === SC_SUBMITTED || sc === SC_RUNNING;
}

/** PENDING_SUBMIT tasks of one priority (stats): all of them, and the due ones by runAt. */
interface Bucket {
  count: number;
  due: number;
  readonly heap: BucketHeap;
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
 * Returned tasks are fresh objects: object payloads and results are kept as JSON text and parsed
 * for each copy (task-record.ts), so mutating a returned task or an input never changes the store.
 */
export class MemoryTaskStore implements TaskStore {
  readonly agingIntervalMs: number;
  private readonly clock: Clock;
  private readonly order: OrderMode;
  private closed = false;

  private readonly tasks = new Map<string, TaskRecord>();
  private readonly byIdempotencyKey = new Map<string, TaskRecord>();
  private readonly statusIndex = new StatusIndex<TaskRecord>();
  private readonly statusCounts: number[] = new Array<number>(STATUS_COUNT).fill(0);
  private seq = 0;
  /** Latest createdAt so far (creation ranks, see order-mode.ts). */
  private maxCreatedAt = -Infinity;
  private token = 0;
  private leaseCounter = 0;
  private readonly leasePrefix = randomUUID().slice(0, 8) + '-';

  private limits: LimitsSnapshot = emptyLimits();
  private readonly lanes = new LaneIndex();
  private readonly ready: ReadyLanes;
  private readonly providers = new Map<string, ProviderState>();
  private readonly accounts = new Map<string, SlotState>();
  private readonly tenants = new Map<string, SlotState>();
  private readonly ckeys = new Map<string, SlotState>();
  /** Providers with rate-parked lanes, waiting for their retryAt. */
  private readonly rateParked = new Set<ProviderState>();

  private readonly delayed = new QueueHeap();
  private readonly buckets = new Map<number, Bucket>();
  private readonly dueDeadlines = new DeadlineHeap();
  private readonly otherDeadlines = new DeadlineHeap();
  private readonly submitLeases = new LeaseHeap();
  private readonly pollLeases = new LeaseHeap();
  private readonly pollsDue = new PollHeap();
  private readonly pollsCanceled = new PollHeap();
  /** SUBMITTED / RUNNING tasks whose poll lease expired (seen by claimPolls) but is not cleared yet. */
  private readonly expiredPollLeases = new Set<TaskRecord>();
  private readonly finished = new FinishedHeap();

  private readonly listeners = new Set<() => void>();
  private notifyPending = false;

  constructor(options: StoreOptions = {}) {
    this.agingIntervalMs = validateAgingInterval(options.agingIntervalMs);
    this.clock = options.clock ?? systemClock;
    this.order = orderMode(this.agingIntervalMs);
    this.ready = new ReadyLanes(this.order.tie);
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
    const now = this.clock.now();
    const out = new Array<CreateResult>(inputs.length);
    let created = 0;
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i];
      if (input.idempotencyKey !== null) {
        const existing = this.byIdempotencyKey.get(input.idempotencyKey);
        if (existing !== undefined) {
          out[i] = { task: toTask(existing), created: false };
          continue;
        }
      }
      const lane = this.laneOf(input);
      const seq = ++this.seq;
      let rank = 0;
      if (now >= this.maxCreatedAt) {
        rank = seq; // created no earlier than every task before it: seq orders like (createdAt, seq)
        this.maxCreatedAt = now;
      }
      const r = newRecord(input, now, seq, lane, rank);
      const size = this.tasks.size;
      this.tasks.set(r.id, r); // one hash operation: a taken id shows as an unchanged size
      if (this.tasks.size === size) this.rejectTakenId(r, out, i);
      lane.refs++;
      if (r.idempotencyKey !== null) this.byIdempotencyKey.set(r.idempotencyKey, r);
      this.statusIndex.add(r);
      this.statusCounts[r.sc]++;
      this.enterPending(r, now);
      // the caller's own payload object goes back (it never reaches the store's state)
      out[i] = { task: toCreatedTask(r, input.payload), created: true };
      created++;
    }
    if (created > 0) this.notify();
    return out;
  }

  async get(id: string): Promise<Task | null> {
    this.assertOpen();
    const r = this.tasks.get(id);
    return r === undefined ? null : toTask(r);
  }

  async list(query: ListQuery): Promise<Task[]> {
    this.assertOpen();
    const sc = STATUS_CODE[query.status];
    if (sc === undefined) return [];
    return this.statusIndex.list(sc, query.limit, query.afterSeq ?? 0).map((r) => toTask(r));
  }

  // ---------------------------------------------------------------- claims

  async claimSubmissions(request: ClaimRequest): Promise<SubmissionClaim> {
    this.assertOpen();
    const now = this.clock.now();
    this.promote(now);
    const timedOut = this.timeOutDue(now);
    const claimed: Task[] = [];
    while (claimed.length < request.limit) {
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
      const r = lane.head!;
      this.leavePending(r);
      this.setStatus(r, TaskStatus.SUBMITTING, now);
      this.takeSlots(lane);
      this.setLease(r, request.owner, request.leaseMs, now, LEASE_SUBMIT);
      claimed.push(toTask(r));
    }
    return { claimed, timedOut, nextWakeAt: this.nextWakeAt() };
  }

  async claimPolls(request: ClaimRequest): Promise<Task[]> {
    this.assertOpen();
    const now = this.clock.now();
    this.noticeExpiredPollLeases(now);
    const out: Task[] = [];
    while (out.length < request.limit) {
      let due = this.pollsDue.top();
      if (due !== undefined && due.nextPollAt! > now) due = undefined;
      const canceled = this.pollsCanceled.top();
      let r: TaskRecord | undefined;
      if (due !== undefined && canceled !== undefined) {
        const a = due.nextPollAt!;
        const b = canceled.nextPollAt!;
        r = a < b || (a === b && due.seq < canceled.seq) ? due : canceled;
      } else r = due ?? canceled;
      if (r === undefined) break;
      this.touch(r, now);
      this.setLease(r, request.owner, request.leaseMs, now, LEASE_POLL);
      out.push(toTask(r));
    }
    return out;
  }

  // ---------------------------------------------------------------- fenced writes

  async renewLease(fence: Fence, leaseMs: number): Promise<Task> {
    this.assertOpen();
    const r = this.fenced(fence);
    const now = this.clock.now();
    this.dropLeaseEntry(r);
    this.pushLease(r, now + leaseMs, r.sc === SC_SUBMITTING ? LEASE_SUBMIT : LEASE_POLL);
    this.touch(r, now);
    return toTask(r);
  }

  async markSubmitted(fence: Fence, outcome: SubmittedOutcome): Promise<Task> {
    this.assertOpen();
    const r = this.fenced(fence);
    this.expectStatus(r, 'markSubmitted', SC_SUBMITTING);
    const now = this.clock.now();
    this.clearLease(r);
    r.externalId = outcome.externalId;
    r.nextPollAt = now + outcome.pollDelayMs;
    this.setStatus(r, outcome.status, now);
    this.placeInFlight(r);
    return toTask(r);
  }

  async recordPoll(fence: Fence, outcome: PollOutcome): Promise<Task> {
    this.assertOpen();
    const r = this.fenced(fence);
    this.expectStatus(r, 'recordPoll', SC_SUBMITTED, SC_RUNNING);
    const now = this.clock.now();
    this.clearLease(r);
    r.nextPollAt = now + outcome.nextPollDelayMs;
    r.pollErrors = outcome.pollErrors;
    if (outcome.error !== undefined) r.error = outcome.error;
    if (r.status !== outcome.status) this.setStatus(r, outcome.status, now);
    else this.touch(r, now);
    this.placeInFlight(r);
    return toTask(r);
  }

  async complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    this.assertOpen();
    const r = this.fenced(fence);
    const now = this.clock.now();
    setResult(r, outcome.result);
    r.error = outcome.error === undefined ? null : outcome.error;
    this.finish(r, outcome.status, now);
    return toTask(r);
  }

  async retry(fence: Fence, outcome: RetryOutcome): Promise<Task> {
    this.assertOpen();
    const r = this.fenced(fence);
    this.expectStatus(r, 'retry', SC_SUBMITTING);
    const now = this.clock.now();
    r.error = outcome.error;
    if (r.cancelRequested) {
      this.finish(r, TaskStatus.CANCELED, now);
    } else {
      r.attempts++;
      r.runAt = now + outcome.delayMs;
      this.backToPending(r, now);
    }
    return toTask(r);
  }

  // ---------------------------------------------------------------- sweeps

  async recoverExpired(limit: number): Promise<Transition[]> {
    this.assertOpen();
    const now = this.clock.now();
    const out: Transition[] = [];
    let n = 0;
    // lost submits
    for (let r = this.submitLeases.top(); n < limit && r !== undefined && r.leaseUntil! <= now; r = this.submitLeases.top()) {
      n++;
      const from = r.status;
      this.recoverSubmit(r, now);
      out.push({ task: toTask(r), from, to: r.status });
    }
    // lost polls: the lease is cleared, the poll will be claimed again (or the deadline applies)
    for (let r = this.pollLeases.top(); n < limit && r !== undefined && r.leaseUntil! <= now; r = this.pollLeases.top()) {
      n++;
      this.expirePollLease(r, now, out);
    }
    for (const r of this.expiredPollLeases) {
      if (n >= limit) break;
      n++;
      this.expirePollLease(r, now, out);
    }
    // deadlines of tasks without a live lease
    for (const heap of [this.dueDeadlines, this.otherDeadlines]) {
      for (let r = heap.top(); n < limit && r !== undefined && r.deadlineAt! <= now; r = heap.top()) {
        n++;
        const from = r.status;
        this.finish(r, TaskStatus.TIMED_OUT, now);
        out.push({ task: toTask(r), from, to: r.status });
      }
    }
    if (n > 0) this.notify();
    return out;
  }

  async purge(olderThan: number, limit: number): Promise<number> {
    this.assertOpen();
    let n = 0;
    for (let r = this.finished.top(); n < limit && r !== undefined && r.finishedAt! <= olderThan; r = this.finished.top()) {
      this.finished.pop();
      this.tasks.delete(r.id);
      if (r.idempotencyKey !== null && this.byIdempotencyKey.get(r.idempotencyKey) === r) {
        this.byIdempotencyKey.delete(r.idempotencyKey);
      }
      this.statusIndex.remove(r);
      this.statusCounts[r.sc]--;
      n++;
    }
    return n;
  }

  // ---------------------------------------------------------------- user operations

  async cancel(id: string): Promise<Task | null> {
    this.assertOpen();
    const r = this.tasks.get(id);
    if (r === undefined) return null;
    const now = this.clock.now();
    if (r.sc === SC_PENDING) {
      this.finish(r, TaskStatus.CANCELED, now);
    } else if (inFlightCode(r.sc) && !r.cancelRequested) {
      r.cancelRequested = true;
      this.touch(r, now);
      if (r.poll === POLL_DUE) this.putPoll(r, POLL_CANCEL);
      this.notify();
    }
    return toTask(r);
  }

  async changePriority(id: string, priority: number): Promise<Task> {
    this.assertOpen();
    const r = this.tasks.get(id);
    if (r === undefined) throw new TaskNotFoundError(id);
    if (r.sc !== SC_PENDING) throw new InvalidStateError(Messages.notPending(id, r.status));
    const now = this.clock.now();
    if (r.priority !== priority) {
      this.leavePending(r);
      r.priority = priority;
      this.enterPending(r, now);
    }
    this.touch(r, now);
    return toTask(r);
  }

  async stats(): Promise<QueueStats> {
    this.assertOpen();
    const now = this.clock.now();
    this.promote(now);
    const byStatus = {} as Record<TaskStatus, number>;
    for (const s of ALL_STATUSES) byStatus[s] = this.statusCounts[STATUS_CODE[s]];
    const pending: PendingPriorityStats[] = [];
    for (const [priority, b] of this.buckets) {
      const oldest = b.due > 0 ? b.heap.top() : undefined;
      pending.push({ priority, count: b.count, oldestWaitMs: oldest === undefined ? 0 : now - oldest.runAt });
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
        const t = this.tenants.get(update.tenantId);
        if (t !== undefined) this.refreshSlot(t, effectiveTenantQuota(this.limits, t.key));
        break;
      }
      case 'defaultTenant':
        for (const t of this.tenants.values()) this.refreshSlot(t, effectiveTenantQuota(this.limits, t.key));
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

  // ================================================================ internals

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /**
   * Input `end` of a create reused a taken id (a caller bug; ids are generated by the queue): the
   * new record `r` replaced the old one in the id map. Put the old one back (found by a scan of
   * the seq index: error path only), undo the tasks created by the earlier inputs, and throw.
   */
  private rejectTakenId(r: TaskRecord, out: CreateResult[], end: number): never {
    const old = this.statusIndex.find((x) => x.id === r.id);
    this.tasks.set(r.id, old!);
    if (r.lane!.refs === 0) this.releaseLane((r.lane!.refs++, r.lane!)); // a lane made for r alone
    for (let i = end - 1; i >= 0; i--) {
      if (!out[i].created) continue;
      const x = this.tasks.get(out[i].task.id)!;
      this.leavePending(x);
      this.statusIndex.remove(x);
      this.statusCounts[x.sc]--;
      this.tasks.delete(x.id);
      if (x.idempotencyKey !== null) this.byIdempotencyKey.delete(x.idempotencyKey);
      this.releaseLane(x.lane!);
      x.lane = null;
    }
    throw new InvalidStateError(`Task id ${r.id} is already taken; nothing was created (all or none).`);
  }

  private fenced(fence: Fence): TaskRecord {
    const r = this.tasks.get(fence.id);
    if (r === undefined) throw new TaskNotFoundError(fence.id);
    if (r.leaseId === null || r.leaseId !== fence.leaseId || r.version !== fence.version) throw new StaleLeaseError(fence.id);
    return r;
  }

  private expectStatus(r: TaskRecord, operation: string, ...codes: number[]): void {
    if (!codes.includes(r.sc)) throw new InvalidStateError(Messages.invalidState(r.id, r.status, operation));
  }

  private touch(r: TaskRecord, now: number): void {
    r.version++;
    r.updatedAt = now;
  }

  private setStatus(r: TaskRecord, status: TaskStatus, now: number): void {
    const from = r.sc;
    r.status = status;
    r.sc = STATUS_CODE[status];
    this.statusCounts[from]--;
    this.statusCounts[r.sc]++;
    this.statusIndex.move(r, from);
    this.touch(r, now);
  }

  private nextToken(): number {
    return ++this.token;
  }

  // ---- lanes and resources

  private laneOf(t: NewTask): Lane {
    let lane = this.lanes.get(t.providerKey, t.accountId, t.tenantId, t.concurrencyKey);
    if (lane === undefined) {
      const provider = this.providerOf(t.providerKey);
      let account: SlotState | null = null;
      if (t.accountId !== null) {
        const ak = accountKey(t.providerKey, t.accountId);
        account = this.accounts.get(ak) ?? null;
        if (account === null) {
          account = new SlotState(ak, t.providerKey, t.accountId);
          account.limit = effectiveAccountLimit(this.limits, t.providerKey, t.accountId);
          this.accounts.set(ak, account);
          provider.accounts.add(account);
        }
        account.refs++;
      }
      const tenant = t.tenantId === null ? null : this.slotOf(this.tenants, t.tenantId, (k) => effectiveTenantQuota(this.limits, k));
      const ckey = t.concurrencyKey === null ? null : this.slotOf(this.ckeys, t.concurrencyKey, (k) => effectiveConcurrencyKeyLimit(this.limits, k));
      lane = new Lane(laneKey(t), t.accountId, t.tenantId, t.concurrencyKey, provider, account, tenant, ckey, this.order);
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
    let s = map.get(key);
    if (s === undefined) {
      s = new SlotState(key);
      s.limit = limitOf(key);
      map.set(key, s);
    }
    s.refs++;
    return s;
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
    const t = lane.tenant;
    if (t !== null && t.limit !== null && t.inFlight >= t.limit) return t;
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

  private freeSlot(s: SlotState): void {
    s.inFlight--;
    if (s.parked.size > 0 && s.hasRoom()) this.unpark(s.parked);
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
      lane.head = null;
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

  private refreshSlot(s: SlotState, limit: number | null): void {
    s.limit = limit;
    if (s.parked.size > 0 && s.hasRoom()) this.unpark(s.parked);
  }

  // ---- pending tasks: lanes, delayed heap, priority buckets

  private enterPending(r: TaskRecord, now: number): void {
    let b = this.buckets.get(r.priority);
    if (b === undefined) {
      b = { count: 0, due: 0, heap: new BucketHeap() };
      this.buckets.set(r.priority, b);
    }
    b.count++;
    if (r.runAt <= now) this.enterDue(r);
    else {
      r.queue = QUEUE_DELAYED;
      r.qTok = this.nextToken();
      this.delayed.push(r, r.runAt, r.seq, r.qTok);
      this.putDeadline(r, DEADLINE_OTHER);
    }
  }

  private enterDue(r: TaskRecord): void {
    const lane = r.lane!;
    r.queue = QUEUE_DUE;
    r.qTok = this.nextToken();
    const o = this.order;
    lane.heap.push(r, o.k1(r), o.k2(r), r.qTok, o.k3(r), o.usesRank ? r.rank : 0);
    lane.live++;
    const b = this.buckets.get(r.priority)!;
    b.heap.push(r, r.runAt, r.seq, r.qTok);
    b.due++;
    this.putDeadline(r, DEADLINE_DUE);
    this.refreshLane(lane);
  }

  /** The task stops being PENDING_SUBMIT (claimed, canceled, timed out) or is re-keyed. */
  private leavePending(r: TaskRecord): void {
    const b = this.buckets.get(r.priority)!;
    if (r.queue === QUEUE_DUE) {
      const lane = r.lane!;
      r.qTok = 0;
      lane.heap.noteRemoved();
      lane.live--;
      b.heap.noteRemoved();
      b.heap.top(); // usually the claimed task was the bucket's oldest: drop it now, not by a compaction scan
      b.due--;
      this.refreshLane(lane);
    } else if (r.queue === QUEUE_DELAYED) {
      r.qTok = 0;
      this.delayed.noteRemoved();
    }
    r.queue = QUEUE_NONE;
    if (--b.count === 0) this.buckets.delete(r.priority);
    this.putDeadline(r, DEADLINE_NONE);
  }

  /** Moves due delayed tasks into their lanes and re-readies rate-parked lanes whose token is due. */
  private promote(now: number): void {
    for (let r = this.delayed.top(); r !== undefined && r.runAt <= now; r = this.delayed.top()) {
      this.delayed.pop();
      r.qTok = 0;
      this.enterDue(r);
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
    const out: Task[] = [];
    for (let r = this.dueDeadlines.top(); r !== undefined && r.deadlineAt! <= now; r = this.dueDeadlines.top()) {
      this.finish(r, TaskStatus.TIMED_OUT, now);
      out.push(toTask(r));
    }
    return out;
  }

  private nextWakeAt(): number | null {
    let at: number | null = null;
    const d = this.delayed.top();
    if (d !== undefined) at = d.runAt;
    for (const p of this.rateParked) {
      if (p.rateLanes.size === 0) continue;
      const t = Math.ceil(p.retryAt);
      if (at === null || t < at) at = t;
    }
    return at;
  }

  // ---- in-flight tasks: leases, polls, deadlines

  private putDeadline(r: TaskRecord, where: number): void {
    if (r.deadlineAt === null || r.deadline === where) return;
    if (r.deadline !== DEADLINE_NONE) {
      r.dTok = 0;
      (r.deadline === DEADLINE_DUE ? this.dueDeadlines : this.otherDeadlines).noteRemoved();
    }
    r.deadline = where;
    if (where !== DEADLINE_NONE) {
      r.dTok = this.nextToken();
      (where === DEADLINE_DUE ? this.dueDeadlines : this.otherDeadlines).push(r, r.deadlineAt, r.seq, r.dTok);
    }
  }

  private putPoll(r: TaskRecord, where: number): void {
    if (r.poll === where) return;
    if (r.poll !== POLL_NONE) {
      r.pTok = 0;
      (r.poll === POLL_DUE ? this.pollsDue : this.pollsCanceled).noteRemoved();
    }
    r.poll = where;
    if (where !== POLL_NONE) {
      r.pTok = this.nextToken();
      (where === POLL_DUE ? this.pollsDue : this.pollsCanceled).push(r, r.nextPollAt!, r.seq, r.pTok);
    }
  }

  /** SUBMITTED / RUNNING without a live lease: waits for its poll (or its cancel) and its deadline. */
  private placeInFlight(r: TaskRecord): void {
    this.putPoll(r, r.cancelRequested ? POLL_CANCEL : POLL_DUE);
    this.putDeadline(r, DEADLINE_OTHER);
  }

  private dropLeaseEntry(r: TaskRecord): void {
    if (r.lease !== LEASE_NONE) {
      r.lTok = 0;
      (r.lease === LEASE_SUBMIT ? this.submitLeases : this.pollLeases).noteRemoved();
      r.lease = LEASE_NONE;
    }
    if (r.expiredLease) {
      r.expiredLease = false;
      this.expiredPollLeases.delete(r);
    }
  }

  private pushLease(r: TaskRecord, until: number, kind: number): void {
    r.leaseUntil = until;
    r.lease = kind;
    r.lTok = this.nextToken();
    (kind === LEASE_SUBMIT ? this.submitLeases : this.pollLeases).push(r, until, r.seq, r.lTok);
    // a live lease takes the task out of the poll and deadline heaps
    this.putPoll(r, POLL_NONE);
    this.putDeadline(r, DEADLINE_NONE);
  }

  private setLease(r: TaskRecord, owner: string, leaseMs: number, now: number, kind: number): void {
    this.dropLeaseEntry(r);
    r.leaseOwner = owner;
    r.leaseId = this.leasePrefix + (++this.leaseCounter).toString(36);
    this.pushLease(r, now + leaseMs, kind);
  }

  private clearLease(r: TaskRecord): void {
    this.dropLeaseEntry(r);
    r.leaseOwner = null;
    r.leaseId = null;
    r.leaseUntil = null;
  }

  /**
   * claimPolls may take SUBMITTED / RUNNING tasks whose lease expired but was not cleared yet:
   * they move from the poll-lease heap to the poll heaps (lease fields untouched; the old holder
   * stays valid until someone else claims or recoverExpired clears it).
   */
  private noticeExpiredPollLeases(now: number): void {
    for (let r = this.pollLeases.top(); r !== undefined && r.leaseUntil! <= now; r = this.pollLeases.top()) {
      this.pollLeases.pop();
      r.lTok = 0;
      r.lease = LEASE_NONE;
      r.expiredLease = true;
      this.expiredPollLeases.add(r);
      this.placeInFlight(r);
    }
  }

  private expirePollLease(r: TaskRecord, now: number, out: Transition[]): void {
    this.clearLease(r);
    if (r.deadlineAt !== null && r.deadlineAt <= now) {
      const from = r.status;
      this.finish(r, TaskStatus.TIMED_OUT, now);
      out.push({ task: toTask(r), from, to: r.status });
      return;
    }
    this.touch(r, now);
    this.placeInFlight(r);
  }

  /** A SUBMITTING task whose lease expired (port: recoverExpired). */
  private recoverSubmit(r: TaskRecord, now: number): void {
    if (!r.idempotent) this.finish(r, TaskStatus.SUBMIT_UNKNOWN, now);
    else if (r.cancelRequested) this.finish(r, TaskStatus.CANCELED, now);
    else if (r.deadlineAt !== null && r.deadlineAt <= now) this.finish(r, TaskStatus.TIMED_OUT, now);
    else if (r.attempts + 1 >= r.maxAttempts) {
      r.attempts++;
      this.finish(r, TaskStatus.FAILED, now);
    } else {
      r.attempts++;
      this.backToPending(r, now);
    }
  }

  /** SUBMITTING -> PENDING_SUBMIT (retry, lost submit): slots freed, back in the order by its runAt. */
  private backToPending(r: TaskRecord, now: number): void {
    this.clearLease(r);
    this.setStatus(r, TaskStatus.PENDING_SUBMIT, now);
    this.freeSlots(r.lane!);
    this.enterPending(r, now);
  }

  /** Any non-terminal status -> terminal: out of every index, slots freed once, lease cleared. */
  private finish(r: TaskRecord, status: TerminalStatus, now: number): void {
    const wasInFlight = inFlightCode(r.sc);
    if (r.sc === SC_PENDING) this.leavePending(r);
    else {
      this.putPoll(r, POLL_NONE);
      this.putDeadline(r, DEADLINE_NONE);
    }
    this.clearLease(r);
    this.setStatus(r, status, now);
    r.finishedAt = now;
    this.finished.push(r, now, r.seq, 1);
    const lane = r.lane!;
    r.lane = null;
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

function countsOf(map: Map<string, SlotState>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of map.values()) if (s.inFlight > 0) out[s.key] = s.inFlight;
  return out;
}
