import { compareOrder, type OrderFields } from '../../../core/order-key';
import { q, run, type StoreContext } from '../context';
import { writesLater, type Exec, type Row } from '../db';
import { orderOfRow } from '../order-columns';
import { laneKeysOf, numOrNull, TASK_COLUMNS } from '../rows';
import { laneFromRow, lanesByKey, PROVIDER_COLUMNS, writeLanes, type LaneState } from './lanes';
import { cacheProviders } from './resources';
import { list, raw, sql } from './sql';
import { markStaged, remarkStaged, spendDueMarks, usesStageMarks } from './stage-marks';
import { updateReturning } from './update-returning';
import type { Resource } from './resources';

/**
 * Claim step 4: every due staged task (new, delayed and now due, retried, recovered,
 * re-prioritised) is merged into its lane: `staged` = 0 and the lane's head becomes the better
 * of its stored head and the best merged task. Reads the partial index (queue, run_at) WHERE
 * PENDING_SUBMIT AND staged = 1, so its cost is the number of tasks that became due since the
 * last claim (each task is merged once). MySQL reads the staged range only when a stage mark
 * is due (see stage-marks.ts): it deletes the due marks first, merges, then marks what stays
 * staged when no unspent mark covers it.
 *
 * With `claim` (the claim's lane states and resources, claim-loop.ts) the lanes go there instead
 * of being written here (the claim writes each lane once, at its end; MySQL: the lanes and their
 * provider resources come joined to the staged rows' locking read, see takeDueStaged). A lane that had no
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
  if (marks && claim?.marksDue && x.later) {
    // the claim's probe saw a due mark, and only claims (under the queue lock it holds) delete
    // marks: this DELETE finds one, so it goes with the staged rows' read (one round trip, db.ts)
    await spendDueMarks(writesLater(x), c, now);
  } else if (marks && (await spendDueMarks(x, c, now)) === 0) return 0;
  const { merged, nextStaged } = await merge(x, c, now, claim);
  if (!marks) return merged;
  if (nextStaged === undefined) {
    await remarkStaged(x, c); // nothing merged: what stays staged was not read
    if (claim) claim.marked = undefined;
    return merged;
  }
  // MySQL in a claim: the staged rows' read also brought the earliest run_at of a staged task
  // not due yet (takeDueStaged). A mark is written only when no unspent mark covers it already
  // (the probe's earliest later mark, which stands until this claim's COMMIT: only claims
  // delete marks, under the queue lock): usually none (nothing delayed), one round trip less.
  const covered = nextStaged === null || (claim?.laterMark != null && claim.laterMark <= nextStaged);
  if (!covered) await markStaged(x, c, nextStaged);
  if (claim) claim.marked = nextStaged;
  return merged;
}

/** The claim that merges: its lane states and resource cache (claim-submissions.ts). */
export interface ClaimState {
  lanes: Map<string, LaneState>;
  resources: Map<string, Resource>;
  /** MySQL: the earliest unspent stage mark after now (the claim's probe, sql/preparation-due.ts); undefined: not known. */
  laterMark?: number | null;
  /** MySQL: the claim's probe saw a due stage mark. */
  marksDue?: boolean;
  /**
   * MySQL, set by the merge: the earliest run_at of a staged task it left (not due), null when
   * none, undefined when not known (the claim then reads its next-wake time).
   */
  marked?: number | null;
  /**
   * MySQL: merged rows whose `staged = 0` the claim writes with its claim UPDATE (mark-claimed.ts)
   * instead of right after the merge; see merge().
   */
  unstage?: number[];
}

/** A lane's columns as they come joined to its staged rows (`ln_<column>`). */
const JOINED_LANE = ['lane_key', 'h_priority', 'h2', 'h_run_at', 'h_created_at', 'h_seq', 'parked_on', 'parked_until'];

/**
 * The due staged rows, locked (PostgreSQL / SQLite: and marked merged, rows as written). MySQL in
 * a claim: the locking read also brings each row's lane (`lanes`, absent when the lane has no
 * row yet) and its provider's resource (into the claim's cache), LEFT JOINed: one round trip
 * instead of three. FOR UPDATE then also locks those lane and resource rows: only queue-lock
 * holders write them, and the claim holds the queue lock, so nobody waits on them. With it
 * (MariaDB: in the same round trip, after the spent marks' DELETE) a plain read of `nextStaged`,
 * the earliest run_at of a staged task not due (the staged index past `now`, so it skips the
 * index entries of merged tasks, all of them at or before `now`; a task committed after it has
 * the mark it was committed with, not spent by this claim). MySQL leaves `staged = 0` to merge().
 */
async function takeDueStaged(
  x: Exec,
  c: StoreContext,
  now: number,
  claim?: ClaimState,
): Promise<{ rows: Row[]; lanes: Map<string, LaneState> | null; nextStaged?: number | null }> {
  const where = sql`status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= ${now}`;
  if (c.d.returning) return { rows: await updateReturning(x, c, { where, set: sql`staged = 0` }), lanes: null };
  // MySQL: the whole rows in the locking read, then the UPDATE (updateReturning would read them again after it)
  const T = raw(c.t.tasks);
  if (!claim) return { rows: await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE queue = ${c.queue} AND ${where} FOR UPDATE`), lanes: null };
  const read = sql`SELECT ${raw(TASK_COLUMNS.split(', ').map((k) => `t.${k}`).join(', '))}, ${raw(JOINED_LANE.map((k) => `l.${k} AS ln_${k}`).join(', '))},
            1 AS pr_joined, ${raw(PROVIDER_COLUMNS)}
          FROM ${T} t
          LEFT JOIN ${raw(c.t.lanes)} l ON l.queue = t.queue AND l.lane_key = t.lane_key
          LEFT JOIN ${raw(c.t.resources)} pr ON pr.queue = t.queue AND pr.rkey = CONCAT('p:', t.provider_key)
          WHERE t.queue = ${c.queue} AND t.status = 'PENDING_SUBMIT' AND t.staged = 1 AND t.run_at <= ${now} FOR UPDATE`;
  // a plain read of its own: inside the locking read it would take shared locks on the index
  // records it passes (a finishing task's among them), and deadlock with that task's complete
  const next = sql`SELECT MIN(run_at) AS pq_next_staged FROM ${T} WHERE status = 'PENDING_SUBMIT' AND staged = 1 AND queue = ${c.queue} AND run_at > ${now}`;
  let rows: Row[];
  let nextRows: Row[];
  if (x.reads) [nextRows, rows] = await x.reads([next, read]);
  else {
    rows = await q(x, read);
    nextRows = rows.length > 0 ? await q(x, next) : [];
  }
  if (rows.length === 0) return { rows, lanes: null };
  cacheProviders(claim.resources, rows);
  const lanes = new Map<string, LaneState>();
  for (const r of rows) {
    if (r.ln_lane_key === null || r.ln_lane_key === undefined || lanes.has(String(r.lane_key))) continue;
    const lane: Row = { ...laneKeysOf(r), lane_key: r.lane_key };
    for (const k of JOINED_LANE) if (k !== 'lane_key') lane[k] = r[`ln_${k}`];
    lanes.set(String(r.lane_key), laneFromRow(lane, c.fair));
  }
  return { rows, lanes, nextStaged: numOrNull(nextRows[0]?.pq_next_staged) };
}

/**
 * Merges the due staged rows into their lanes. MySQL: the rows' `staged = 0` is written by the
 * claim's own UPDATE of the rows it claims (plus one UPDATE of the merged rows it leaves, if
 * any; mark-claimed.ts) when every lane merged into had no head: those lanes take the merged
 * rows as their tasks and are never read again by this claim (claim-loop.ts), so no read of the
 * claim needs `staged = 0` first (one round trip less per claim of tasks as soon as they are
 * due). Otherwise a lane's task read (staged = 0) must see them: the UPDATE is sent here.
 */
async function merge(x: Exec, c: StoreContext, now: number, claim?: ClaimState): Promise<{ merged: number; nextStaged?: number | null }> {
  const { rows, lanes: joined, nextStaged } = await takeDueStaged(x, c, now, claim);
  if (rows.length === 0) return { merged: 0 };
  const byLane = new Map<string, Array<{ order: OrderFields; row: Row }>>();
  for (const r of rows) {
    const key = String(r.lane_key);
    let l = byLane.get(key);
    if (!l) byLane.set(key, (l = []));
    l.push({ order: orderOfRow(r, c.fair), row: r });
  }
  const lanes = joined ?? (await lanesByKey(x, c, [...byLane.keys()]));
  const changed: LaneState[] = [];
  let headless = true;
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
    } else headless = false;
    if (lane.head === null || compareOrder(order, lane.head, c.aging) < 0) {
      lane.head = order;
      lane.dirty = true;
      changed.push(lane);
    }
    if (claim) claim.lanes.set(key, lane);
  }
  if (!c.d.returning) {
    const seqs = rows.map((r) => Number(r.seq));
    if (claim && headless) claim.unstage = seqs;
    else await run(x, sql`UPDATE ${raw(c.t.tasks)} SET staged = 0 WHERE seq IN (${list(seqs)})`);
    for (const r of rows) r.staged = 0;
  }
  if (!claim) await writeLanes(x, c, changed);
  return { merged: rows.length, nextStaged };
}
