import type { LaneRoom, ProviderRoom, SlotRoom } from '../../core/lane-admission';
import { LaneQueue } from './lane-queue';
import type { LaneKeys, TaskTable } from './task-table';
import { objectArray } from './object-array';

/**
 * Lanes and admission resources (LANES.md). A lane groups the tasks that share all admission
 * keys; only its head can be the next claim. A lane is IDLE (no due task), READY (in the
 * ready-lane heap, ordered by head key) or PARKED (in the waiting set of the resource that
 * refused its head, until that resource frees).
 */
export const LANE_IDLE = 0;
export const LANE_READY = 1;
export const LANE_PARKED = 2;

/** A provider: pause, rate (GCRA state) and in-flight count for stats. Kept for the store's life. */
export class ProviderState implements ProviderRoom {
  paused = false;
  qps: number | null = null;
  burst: number | null = null;
  accountConcurrency: number | null = null;
  /** GCRA theoretical arrival time. */
  tat = 0;
  /** When rate-parked lanes may try again. */
  retryAt = 0;
  inFlight = 0;
  readonly pausedLanes = new Set<Lane>();
  readonly rateLanes = new Set<Lane>();
  /** Account states of this provider (their default limit follows accountConcurrency). */
  readonly accounts = new Set<SlotState>();

  constructor(readonly key: string) {}
}

/** A counted resource: an account, a tenant or a concurrency key. */
export class SlotState implements SlotRoom {
  /** Effective limit; null = unlimited. */
  limit: number | null = null;
  /** Tasks holding a slot (SUBMITTING, SUBMITTED, RUNNING). */
  inUse = 0;
  /** Lanes referencing this resource; the state is dropped when it reaches 0. */
  refs = 0;
  readonly parked = new Set<Lane>();

  constructor(
    readonly key: string,
    /** For accounts: the provider and account id (stats); otherwise null. */
    readonly providerKey: string | null = null,
    readonly accountId: string | null = null,
  ) {}

  hasRoom(): boolean {
    return this.limit === null || this.inUse < this.limit;
  }
}

export class Lane {
  readonly tasks: LaneQueue;
  /** Live due tasks in `tasks`. */
  live = 0;
  /** Non-terminal tasks of this lane (due, delayed or in flight); the lane is dropped at 0. */
  refs = 0;
  state = LANE_IDLE;
  readyIdx = -1;
  parkedIn: Set<Lane> | null = null;
  /** Head (best due task's slot, -1 = none) and its keys, mirrored for the ready-lane heap. */
  head = -1;
  hk1 = 0;
  hk2 = 0;
  hk3 = 0;
  hrank = 0;
  /** The lane's limits as core's admission rule reads them (core/lane-admission.ts). */
  readonly room: LaneRoom;

  constructor(
    /** laneKey() of the admission keys. */
    readonly key: string,
    readonly accountId: string | null,
    readonly tenantId: string | null,
    readonly concurrencyKey: string | null,
    readonly provider: ProviderState,
    readonly account: SlotState | null,
    readonly tenant: SlotState | null,
    readonly ckey: SlotState | null,
    /** Shared by the lane's tasks (task-table.ts KEYS). */
    readonly keys: LaneKeys,
    table: TaskTable,
    tie: (a: number, b: number) => number,
  ) {
    this.tasks = new LaneQueue(table, tie);
    this.room = { provider, account, tenant, concurrencyKey: ckey };
  }
}

type ByKey = Map<string | null, Lane>;
type ByTenant = Map<string | null, ByKey>;
type ByAccount = Map<string | null, ByTenant>;

/**
 * Lanes by their four admission keys: nested maps, so finding the lane of a new task costs four
 * hash lookups and builds no key string. Empty inner maps are dropped.
 */
export class LaneIndex {
  private readonly root = new Map<string, ByAccount>();

  get(providerKey: string, accountId: string | null, tenantId: string | null, concurrencyKey: string | null): Lane | undefined {
    return this.root.get(providerKey)?.get(accountId)?.get(tenantId)?.get(concurrencyKey);
  }

  add(lane: Lane): void {
    let a = this.root.get(lane.provider.key);
    if (a === undefined) this.root.set(lane.provider.key, (a = new Map()));
    let t = a.get(lane.accountId);
    if (t === undefined) a.set(lane.accountId, (t = new Map()));
    let k = t.get(lane.tenantId);
    if (k === undefined) t.set(lane.tenantId, (k = new Map()));
    k.set(lane.concurrencyKey, lane);
  }

  delete(lane: Lane): void {
    const a = this.root.get(lane.provider.key)!;
    const t = a.get(lane.accountId)!;
    const k = t.get(lane.tenantId)!;
    k.delete(lane.concurrencyKey);
    if (k.size > 0) return;
    t.delete(lane.tenantId);
    if (t.size > 0) return;
    a.delete(lane.accountId);
    if (a.size > 0) return;
    this.root.delete(lane.provider.key);
  }
}

/** Binary heap of READY lanes by head key; each lane knows its index (readyIdx). */
export class ReadyLanes {
  private readonly heap = objectArray<Lane>();

  constructor(private readonly tie: (a: number, b: number) => number) {}

  get size(): number {
    return this.heap.length;
  }

  peek(): Lane | undefined {
    return this.heap[0];
  }

  push(lane: Lane): void {
    lane.readyIdx = this.heap.length;
    this.heap.push(lane);
    this.up(lane.readyIdx);
  }

  remove(lane: Lane): void {
    const i = lane.readyIdx;
    const last = this.heap.pop()!;
    lane.readyIdx = -1;
    if (last === lane) return;
    this.heap[i] = last;
    last.readyIdx = i;
    this.update(last);
  }

  /** Re-sifts a lane whose head key changed. */
  update(lane: Lane): void {
    const i = lane.readyIdx;
    if (i > 0 && this.less(lane, this.heap[(i - 1) >> 1])) this.up(i);
    else this.down(i);
  }

  private less(a: Lane, b: Lane): boolean {
    if (a.hk1 !== b.hk1) return a.hk1 < b.hk1;
    if (a.hk2 !== b.hk2) return a.hk2 < b.hk2;
    if (a.hk3 !== b.hk3) return a.hk3 < b.hk3;
    if (a.hrank !== 0 && b.hrank !== 0) return a.hrank < b.hrank;
    return this.tie(a.head, b.head) < 0;
  }

  private place(lane: Lane, i: number): void {
    this.heap[i] = lane;
    lane.readyIdx = i;
  }

  private up(i: number): void {
    const heap = this.heap;
    const lane = heap[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(lane, heap[p])) break;
      this.place(heap[p], i);
      i = p;
    }
    this.place(lane, i);
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const lane = heap[i];
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.less(heap[c + 1], heap[c])) c++;
      if (!this.less(heap[c], lane)) break;
      this.place(heap[c], i);
      i = c;
    }
    this.place(lane, i);
  }
}
