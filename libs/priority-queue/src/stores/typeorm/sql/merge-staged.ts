import { compareOrder, type OrderFields } from '../../../core/order-key';
import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { orderOfRow } from '../order-columns';
import { laneKeysOf, TASK_COLUMNS } from '../rows';
import { laneFromRow, lanesByKey, writeLanes, type LaneState } from './lanes';
import { list, raw, sql } from './sql';
import { remarkStaged, spendDueMarks, usesStageMarks } from './stage-marks';
import { updateReturning } from './update-returning';
import type { Resource } from './resources';

/**
 * Claim step 4: every due staged task (new, delayed and now due, retried, recovered,
 * re-prioritised) is merged into its lane: `staged` = 0 and the lane's head becomes the better
 * of its stored head and the best merged task. Reads the partial index (queue, run_at) WHERE
 * PENDING_SUBMIT AND staged = 1, so its cost is the number of tasks that became due since the
 * last claim (each task is merged once). MySQL reads the staged range only when a stage mark
 * is due (see stage-marks.ts): it deletes the due marks first, merges, then re-marks what stays.
 *
 * With `claim` (the claim's lane states and resources, claim-loop.ts) the lanes go there instead
 * of being written here (the claim writes each lane once, at its end; MySQL: with their provider
 * resources, read in the same statement). A lane that had no
 * head gets the rows merged into it as its read tasks (`complete`): a lane's head is null only
 * when it has no merged task (a merge always sets it; the claim clears it only when the lane's
 * locked read came back empty), so these rows, locked by the merge's read, are all of them and
 * the claim need not read them again (one round trip less for a task claimed as soon as it is
 * due, the latency path).
 *
 * Locks: queue lock; the merged rows FOR UPDATE; lanes rows are only written by queue-lock
 * holders.
 */
export async function mergeDueStaged(x: Exec, c: StoreContext, now: number, claim?: ClaimState): Promise<number> {
  const marks = usesStageMarks(c);
  if (marks && (await spendDueMarks(x, c, now)) === 0) return 0;
  const merged = await merge(x, c, now, claim);
  if (marks) await remarkStaged(x, c);
  return merged;
}

/** The due staged rows, locked, then marked merged: rows as written. */
/** The claim that merges: its lane states and resource cache (claim-submissions.ts). */
export interface ClaimState {
  lanes: Map<string, LaneState>;
  resources: Map<string, Resource>;
}

async function takeDueStaged(x: Exec, c: StoreContext, now: number): Promise<Row[]> {
  const where = sql`status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= ${now}`;
  if (c.d.returning) return updateReturning(x, c, { where, set: sql`staged = 0` });
  // MySQL: the whole rows in the locking read, then the UPDATE (updateReturning would read them again after it)
  const T = raw(c.t.tasks);
  const rows = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE queue = ${c.queue} AND ${where} FOR UPDATE`);
  if (rows.length === 0) return [];
  await run(x, sql`UPDATE ${T} SET staged = 0 WHERE seq IN (${list(rows.map((r) => r.seq))})`);
  for (const r of rows) r.staged = 0;
  return rows;
}

async function merge(x: Exec, c: StoreContext, now: number, claim?: ClaimState): Promise<number> {
  const rows = await takeDueStaged(x, c, now);
  if (rows.length === 0) return 0;
  const byLane = new Map<string, Array<{ order: OrderFields; row: Row }>>();
  for (const r of rows) {
    const key = String(r.lane_key);
    let l = byLane.get(key);
    if (!l) byLane.set(key, (l = []));
    l.push({ order: orderOfRow(r, c.fair), row: r });
  }
  const lanes = await lanesByKey(x, c, [...byLane.keys()], claim?.resources);
  const changed: LaneState[] = [];
  for (const [key, merged] of byLane) {
    merged.sort((a, b) => compareOrder(a.order, b.order, c.aging));
    const { order, row } = merged[0];
    let lane = lanes.get(key);
    if (!lane) {
      lane = laneFromRow({ ...laneKeysOf(row), lane_key: key, h_seq: null, parked_on: null, parked_until: null }, c.fair);
      lanes.set(key, lane);
    }
    if (claim && lane.head === null) {
      lane.tasks = merged.map((m) => m.row);
      lane.complete = true;
    }
    if (lane.head === null || compareOrder(order, lane.head, c.aging) < 0) {
      lane.head = order;
      lane.dirty = true;
      changed.push(lane);
    }
    if (claim) claim.lanes.set(key, lane);
  }
  if (!claim) await writeLanes(x, c, changed);
  return rows.length;
}
