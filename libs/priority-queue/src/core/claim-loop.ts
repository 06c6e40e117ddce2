import type { RefusalReason } from './admission';
import { consumeRoom, laneRefusalReason, type LaneRoom } from './lane-admission';

/** Returned by a source that must read from its database before it can answer (see claimFromLanes). */
export const LOAD = Symbol('load');
/** Returned by `take` when the lane's known head was not its real head: the lane was re-keyed or emptied. */
export const RETRY = Symbol('retry');

/**
 * A store's ready lanes as the claim loop sees them (LANES.md). A lane is ready when it has a
 * due head and is not parked; the source orders ready lanes by their heads' order keys
 * (core/order-key.ts) and keeps the state of its lanes and limits.
 */
export interface ReadyLaneSource<L, T> {
  /** The ready lane whose head comes first; null when no ready lane is left; LOAD to read more lanes first. */
  first(): L | null | typeof LOAD;
  /** The limits of the lane, as this claim has left them so far. */
  room(lane: L): LaneRoom;
  /**
   * `reason` refused the lane's head: move the lane out of the ready lanes until that limit has
   * room again (a rate refusal: until nextTokenAt). Each refused lane parks once per blocking event.
   */
  park(lane: L, reason: RefusalReason, now: number): void;
  /**
   * Takes the lane's head out of the lane and re-keys the lane by its next head (or drops it
   * from the ready lanes when it has none). RETRY: the lane's known head was only a bound and
   * has been corrected; LOAD: the lane's tasks must be read first. Either way nothing was taken.
   */
  take(lane: L): T | typeof RETRY | typeof LOAD;
}

/**
 * The claim loop of LANES.md (DESIGN §3), the same for every store that runs it in TypeScript
 * (memory, TypeORM on SQLite and MySQL / MariaDB): while fewer than `limit` tasks are claimed
 * and a ready lane is left, take the ready lane with the best head; the first of its limits
 * without room (pause, rate, account, tenant, concurrency key) parks it; else its head is
 * claimed and one unit of each of its limits is consumed, so every claim counts against the
 * next. The task taken is always the first admissible candidate: every lane with a better head
 * has just been shown to be blocked. No cap on the lanes looked at: each refused lane parks
 * once, so the work is bounded by `limit` plus the parkings.
 *
 * Appends the claimed tasks to `out` in claim order. Returns true when done (`limit` reached or
 * no ready lane left), false when the source answered LOAD: the caller reads what the source
 * needs and calls again with the same `out` (a source in memory never answers LOAD, so its
 * claim runs in one synchronous call).
 */
export function claimFromLanes<L, T>(src: ReadyLaneSource<L, T>, limit: number, now: number, out: T[]): boolean {
  while (out.length < limit) {
    const lane = src.first();
    if (lane === null) return true;
    if (lane === LOAD) return false;
    const room = src.room(lane);
    const reason = laneRefusalReason(room, now);
    if (reason !== null) {
      src.park(lane, reason, now);
      continue;
    }
    const task = src.take(lane);
    if (task === RETRY) continue;
    if (task === LOAD) return false;
    consumeRoom(room, now);
    out.push(task);
  }
  return true;
}
