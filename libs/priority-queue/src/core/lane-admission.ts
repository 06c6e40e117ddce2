import { effectiveBurst, gcra, type RefusalReason } from './admission';

/**
 * DESIGN §3 for one lane (LANES.md: tasks sharing all admission keys are admitted or refused
 * together): the admission rule every claim applies, written once. Each store hands in a view
 * of the lane's limits (a LaneRoom) over its own state: the memory store its live resource
 * objects, the generic SQL claim the rows it loaded in the claim's transaction, explain a
 * snapshot. The Redis script (stores/redis/lua/claim_submissions.lua) and the PostgreSQL claim
 * function are the only other copies; their headers name these functions.
 */

/** A provider as admission reads it. */
export interface ProviderRoom {
  readonly paused: boolean;
  /** Submits per second; null = unlimited. */
  readonly qps: number | null;
  /** Null = 1 (effectiveBurst). */
  readonly burst: number | null;
  /** GCRA theoretical arrival time (ms, 0 = fresh): read by refusal, advanced by consumeRoom. */
  tat: number;
}

/** A counted resource (account, tenant, concurrency key) as admission reads it. */
export interface SlotRoom {
  /** Slots in use (SUBMITTING, SUBMITTED, RUNNING); consumeRoom adds one. */
  inUse: number;
  /** The effective limit (the override, else the default that applies); null = none. */
  readonly limit: number | null;
}

/** Every limit that applies to a lane; null where the lane has no such key. */
export interface LaneRoom {
  readonly provider: ProviderRoom;
  readonly account: SlotRoom | null;
  readonly tenant: SlotRoom | null;
  readonly concurrencyKey: SlotRoom | null;
}

function full(s: SlotRoom | null): boolean {
  return s !== null && s.limit !== null && s.inUse >= s.limit;
}

/**
 * The first limit of the lane without room at `now`, in the order pause, rate, account,
 * tenant, concurrency key; null when the lane's head may be claimed.
 */
export function laneRefusalReason(room: LaneRoom, now: number): RefusalReason | null {
  const p = room.provider;
  if (p.paused) return 'paused';
  if (p.qps !== null && !gcra(p.tat, now, p.qps, effectiveBurst(p)).allowed) return 'rate';
  if (full(room.account)) return 'account';
  if (full(room.tenant)) return 'tenant';
  if (full(room.concurrencyKey)) return 'concurrencyKey';
  return null;
}

/** For a provider that refused on rate: when its next token is due (ms, may be fractional). */
export function nextTokenAt(p: ProviderRoom, now: number): number {
  return p.qps === null ? now : gcra(p.tat, now, p.qps, effectiveBurst(p)).retryAt;
}

/** A claim of the lane's head: one rate token and one slot of every counted limit (after laneRefusalReason said null). */
export function consumeRoom(room: LaneRoom, now: number): void {
  const p = room.provider;
  if (p.qps !== null) p.tat = gcra(p.tat, now, p.qps, effectiveBurst(p)).tat;
  if (room.account !== null) room.account.inUse += 1;
  if (room.tenant !== null) room.tenant.inUse += 1;
  if (room.concurrencyKey !== null) room.concurrencyKey.inUse += 1;
}
