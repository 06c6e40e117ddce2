import { accountKey, emptyLimits, laneKey, type LimitUpdate, type LimitsSnapshot, type RefusalReason } from '../../core/admission';
import { claimFromLanes, type ReadyLaneSource } from '../../core/claim-loop';
import type { AdmissionState } from '../../core/explain';
import { nextTokenAt, type LaneRoom } from '../../core/lane-admission';
import type { QueueStats } from '../../core/task-store.port';
import { LANE_IDLE, LANE_PARKED, LANE_READY, Lane, LaneIndex, ProviderState, ReadyLanes, SlotState } from './lanes';
import { applyLimitUpdate, effectiveAccountLimit, effectiveConcurrencyKeyLimit, effectiveTenantQuota } from './limits-state';
import type { LaneKeys, TaskTable } from './task-table';

/**
 * The lanes of LANES.md in memory, with their limits: which lane's head the next claim takes.
 * Each lane (tasks sharing all admission keys) keeps its due tasks by order key in a LaneQueue
 * (lane-queue.ts: sorted runs and a small heap); READY lanes sit in a heap by head key. A claim is core's claim loop (core/claim-loop.ts) over the
 * ready lanes: it takes the best lane, checks its limits (core/lane-admission.ts) and either
 * takes its head or PARKS the lane on the first refusing resource (paused provider, rate,
 * account, tenant, concurrency key), so each refusal costs one O(log n) step per lane, never one
 * step per refused task. Parked lanes return to READY when their resource frees (slot freed,
 * limit changed, provider resumed, rate token due).
 *
 * The scheduler owns the lanes and the admission resources; the tasks' other state (status,
 * buckets, timers) belongs to the store, which tells it when a lane's task queue changed (refresh) and
 * when a task took or freed its slots.
 */
export class LaneScheduler implements ReadyLaneSource<Lane, number> {
  limits: LimitsSnapshot = emptyLimits();
  private readonly lanes = new LaneIndex();
  private readonly ready: ReadyLanes;
  readonly providers = new Map<string, ProviderState>();
  readonly accounts = new Map<string, SlotState>();
  readonly tenants = new Map<string, SlotState>();
  readonly ckeys = new Map<string, SlotState>();
  /** Providers with rate-parked lanes, waiting for their retryAt. */
  private readonly rateParked = new Set<ProviderState>();
  /** Queue tokens (task-table.ts Q_TOK) of the heads taken by the running claim, in claim order. */
  private tokens: number[] = NO_CLAIM;

  constructor(
    private readonly t: TaskTable,
    private readonly tie: (a: number, b: number) => number,
  ) {
    this.ready = new ReadyLanes(tie);
  }

  // ---- the claim (core/claim-loop.ts over the ready lanes)

  /**
   * Takes up to `limit` lane heads in claim order: their slots into `slots`, their queue tokens
   * into `tokens`. Each head has left its lane and holds its limits; the rest of its pending
   * state (bucket, token, deadline) is the caller's.
   */
  claim(limit: number, now: number, slots: number[], tokens: number[]): void {
    this.tokens = tokens;
    claimFromLanes(this, limit, now, slots);
    this.tokens = NO_CLAIM;
  }

  first(): Lane | null {
    return this.ready.peek() ?? null;
  }

  room(lane: Lane): LaneRoom {
    return lane.room;
  }

  park(lane: Lane, reason: RefusalReason, now: number): void {
    const p = lane.provider;
    switch (reason) {
      case 'paused':
        return this.parkIn(lane, p.pausedLanes);
      case 'rate':
        p.retryAt = nextTokenAt(p, now);
        this.rateParked.add(p);
        return this.parkIn(lane, p.rateLanes);
      case 'account':
        return this.parkIn(lane, lane.account!.parked);
      case 'tenant':
        return this.parkIn(lane, lane.tenant!.parked);
      case 'concurrencyKey':
        return this.parkIn(lane, lane.ckey!.parked);
    }
  }

  take(lane: Lane): number {
    const s = lane.head;
    this.tokens.push(lane.tasks.topToken());
    lane.tasks.pop();
    lane.live--;
    this.refresh(lane);
    lane.provider.inFlight++; // the other limits count the claim in consumeRoom
    return s;
  }

  // ---- lanes

  /** The lane of these admission keys (made on first use); the caller counts its reference. */
  laneOf(nt: LaneKeys): Lane {
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

  /** A task of the lane became terminal: drop the lane (and unused resources) when it was the last. */
  releaseLane(lane: Lane): void {
    if (--lane.refs > 0) return;
    this.lanes.delete(lane);
    if (lane.account !== null && --lane.account.refs === 0) {
      this.accounts.delete(lane.account.key);
      lane.provider.accounts.delete(lane.account);
    }
    if (lane.tenant !== null && --lane.tenant.refs === 0) this.tenants.delete(lane.tenant.key);
    if (lane.ckey !== null && --lane.ckey.refs === 0) this.ckeys.delete(lane.ckey.key);
  }

  /** Re-reads the lane's head after its task queue changed; moves it between IDLE and READY. */
  refresh(lane: Lane): void {
    const head = lane.tasks.top();
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
    lane.hk1 = lane.tasks.topK1();
    lane.hk2 = lane.tasks.topK2();
    lane.hk3 = lane.tasks.topK3();
    lane.hrank = lane.tasks.topRank();
    if (lane.state === LANE_READY) this.ready.update(lane);
    else if (lane.state === LANE_IDLE) {
      lane.state = LANE_READY;
      this.ready.push(lane);
    }
  }

  /** The task left SUBMITTING / SUBMITTED / RUNNING: free its slots, re-ready lanes waiting on them. */
  freeSlots(lane: Lane): void {
    lane.provider.inFlight--;
    if (lane.account !== null) this.freeSlot(lane.account);
    if (lane.tenant !== null) this.freeSlot(lane.tenant);
    if (lane.ckey !== null) this.freeSlot(lane.ckey);
  }

  /** Re-readies the rate-parked lanes whose provider's next token is due. */
  wakeRateParked(now: number): void {
    if (this.rateParked.size === 0) return;
    for (const p of this.rateParked) {
      if (now >= p.retryAt) {
        this.rateParked.delete(p);
        this.unpark(p.rateLanes);
      }
    }
  }

  /** When the first rate-parked lane may try again (ms), or null. */
  nextRateWakeAt(): number | null {
    let at: number | null = null;
    for (const p of this.rateParked) {
      if (p.rateLanes.size === 0) continue;
      const r = Math.ceil(p.retryAt);
      if (at === null || r < at) at = r;
    }
    return at;
  }

  // ---- limits

  /** Applies a (validated) update and re-readies the lanes it gives room. */
  setLimits(update: LimitUpdate): void {
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
  }

  /** The limits, GCRA states and slots in use, as explain reads them (core/explain.ts). */
  admissionState(): AdmissionState {
    const tat: Record<string, number> = {};
    for (const p of this.providers.values()) tat[p.key] = p.tat;
    const accounts: Record<string, number> = {};
    for (const a of this.accounts.values()) accounts[a.key] = a.inUse;
    return { limits: this.limits, tat, accounts, tenants: countsOf(this.tenants), concurrencyKeys: countsOf(this.ckeys) };
  }

  /** The in-flight counts of QueueStats. */
  inFlightStats(): Pick<QueueStats, 'inFlightByProvider' | 'inFlightByAccount' | 'inFlightByTenant' | 'inFlightByConcurrencyKey'> {
    const inFlightByProvider: Record<string, number> = {};
    for (const p of this.providers.values()) if (p.inFlight > 0) inFlightByProvider[p.key] = p.inFlight;
    const inFlightByAccount: QueueStats['inFlightByAccount'] = [];
    for (const a of this.accounts.values()) {
      if (a.inUse > 0) inFlightByAccount.push({ providerKey: a.providerKey!, accountId: a.accountId!, count: a.inUse });
    }
    return { inFlightByProvider, inFlightByAccount, inFlightByTenant: countsOf(this.tenants), inFlightByConcurrencyKey: countsOf(this.ckeys) };
  }

  // ---- internals

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

  private freeSlot(st: SlotState): void {
    st.inUse--;
    if (st.parked.size > 0 && st.hasRoom()) this.unpark(st.parked);
  }

  private parkIn(lane: Lane, set: Set<Lane>): void {
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
}

/** `tokens` outside a claim: take() is only called by one. */
const NO_CLAIM: number[] = Object.freeze([]) as unknown as number[];

function countsOf(map: Map<string, SlotState>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const st of map.values()) if (st.inUse > 0) out[st.key] = st.inUse;
  return out;
}
