import { compareOrder, type OrderFields } from '../../../core/order-key';
import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { orderOfRow } from '../order-columns';
import { laneKeysOf, TASK_COLUMNS } from '../rows';
import { laneFromRow, lanesByKey, writeLanes, type LaneState } from './lanes';
import { list, raw, sql } from './sql';
import { remarkStaged, spendDueMarks, usesStageMarks } from './stage-marks';
import { updateReturning } from './update-returning';

/**
 * Claim step 4: every due staged task (new, delayed and now due, retried, recovered,
 * re-prioritised) is merged into its lane: `staged` = 0 and the lane's head becomes the better
 * of its stored head and the best merged task. Reads the partial index (queue, run_at) WHERE
 * PENDING_SUBMIT AND staged = 1, so its cost is the number of tasks that became due since the
 * last claim (each task is merged once). MySQL reads the staged range only when a stage mark
 * is due (see stage-marks.ts): it deletes the due marks first, merges, then re-marks what stays.
 *
 * Locks: queue lock; the merged rows FOR UPDATE; lanes rows are only written by queue-lock
 * holders.
 */
export async function mergeDueStaged(x: Exec, c: StoreContext, now: number): Promise<number> {
  const marks = usesStageMarks(c);
  if (marks && (await spendDueMarks(x, c, now)) === 0) return 0;
  const merged = await merge(x, c, now);
  if (marks) await remarkStaged(x, c);
  return merged;
}

/** The due staged rows, locked, then marked merged: rows as written. */
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

async function merge(x: Exec, c: StoreContext, now: number): Promise<number> {
  const rows = await takeDueStaged(x, c, now);
  if (rows.length === 0) return 0;
  const best = new Map<string, { order: OrderFields; row: (typeof rows)[number] }>();
  for (const r of rows) {
    const key = String(r.lane_key);
    const order = orderOfRow(r, c.fair);
    const cur = best.get(key);
    if (!cur || compareOrder(order, cur.order, c.aging) < 0) best.set(key, { order, row: r });
  }
  const lanes = await lanesByKey(x, c, [...best.keys()]);
  const changed: LaneState[] = [];
  for (const [key, { order, row }] of best) {
    let lane = lanes.get(key);
    if (!lane) {
      lane = laneFromRow({ ...laneKeysOf(row), lane_key: key, h_seq: null, parked_on: null, parked_until: null }, c.fair);
      lanes.set(key, lane);
    }
    if (lane.head === null || compareOrder(order, lane.head, c.aging) < 0) {
      lane.head = order;
      lane.dirty = true;
      changed.push(lane);
    }
  }
  await writeLanes(x, c, changed);
  return rows.length;
}
