import { compareOrder, type OrderFields } from '../../../core/order-key';
import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import type { LaneRoom } from '../../../core/lane-admission';
import { ORDER_COLUMNS, orderColumns, orderOfRow } from '../order-columns';
import { chunks, laneKeysOf, numOrNull, TASK_COLUMNS as TASK_COLS, type LaneKeys } from '../rows';
import { join, list, raw, sql, type Sql } from './sql';

/**
 * The lanes table (LANES.md): one row per set of admission keys with the order key of its best
 * merged task (the head), `ready` = has a head and is not parked. Only queue-lock holders write
 * it (claims, setLimits). The stored head is a LOWER BOUND of the lane's true head: a cancel,
 * a priority change or a timeout removes a task without touching the lane, and the claim
 * re-reads the lane's tasks before it trusts the head.
 */
export interface LaneState {
  laneKey: string;
  keys: LaneKeys;
  head: OrderFields | null;
  parkedOn: string | null;
  parkedUntil: number | null;
  dirty: boolean;
  /** Head tasks read by this claim (locked), best first. */
  tasks?: Row[];
  /** All of the lane's merged tasks are in `tasks`. */
  complete?: boolean;
  /** Its limits over the claim's loaded resources (claim-loop.ts). */
  room?: LaneRoom;
}

const LANE_COLUMNS = 'lane_key, provider_key, account_id, tenant_id, concurrency_key, h_priority, h2, h_run_at, h_created_at, h_seq, parked_on, parked_until';

/** A lane row as LaneState (`fair`: the queue has fairness, h2 is the head's fair tag). */
export function laneFromRow(r: Row, fair: boolean): LaneState {
  return {
    laneKey: String(r.lane_key),
    keys: laneKeysOf(r),
    head: r.h_seq === null || r.h_seq === undefined ? null : orderOfRow(r, fair, 'h_'),
    parkedOn: r.parked_on === null || r.parked_on === undefined ? null : String(r.parked_on),
    parkedUntil: numOrNull(r.parked_until),
    dirty: false,
  };
}

export function isReady(l: LaneState): boolean {
  return l.head !== null && l.parkedOn === null && l.parkedUntil === null;
}

/**
 * THE claim query: the best ready lanes, by head key. Reads the index
 * (queue, h1, h2, h_run_at, h_created_at, h_seq) WHERE ready = 1 (MySQL: (queue, ready, ...)),
 * so its cost depends on the number of lanes read, never on the number of tasks behind them
 * or on history. No row lock: lanes change only under the queue lock, which the caller holds.
 * MySQL / MariaDB: each lane comes with its provider's resource row (columns `pr_*`, NULL when
 * there is none; sql/resources.ts cacheProviders), a primary-key lookup per lane of the page:
 * one round trip less per claim (every lane has a provider key).
 */
export function readyLanes(x: Exec, c: StoreContext, limit: number): Promise<Row[]> {
  const page = sql`SELECT ${raw(LANE_COLUMNS)}${raw(c.d.kind === 'mysql' ? ', h1' : '')} FROM ${raw(c.t.lanes)}
      WHERE queue = ${c.queue} AND ready = 1
      ORDER BY h1, h2, h_run_at, h_created_at, h_seq LIMIT ${raw(String(limit))}`;
  if (c.d.kind !== 'mysql') return q(x, page);
  // the page is a derived table (LIMIT: materialised, not merged), so the join cannot change its plan
  return q(
    x,
    sql`SELECT l.*, 1 AS pr_joined, ${raw(PROVIDER_COLUMNS)} FROM (${page}) l
      LEFT JOIN ${raw(c.t.resources)} pr ON pr.queue = ${c.queue} AND pr.rkey = CONCAT('p:', l.provider_key)
      ORDER BY l.h1, l.h2, l.h_run_at, l.h_created_at, l.h_seq`,
  );
}

/** A provider resource's columns as `pr_<column>`, for cacheProviders (sql/resources.ts). */
export const PROVIDER_COLUMNS = ['rkey', 'in_use', 'tat', 'configured', 'limit_value', 'paused', 'qps', 'burst', 'account_concurrency']
  .map((k) => `pr.${k} AS pr_${k}`)
  .join(', ');

export async function lanesByKey(x: Exec, c: StoreContext, keys: readonly string[]): Promise<Map<string, LaneState>> {
  const out = new Map<string, LaneState>();
  for (const part of chunks(keys, 500)) {
    const rows = await q(x, sql`SELECT ${raw(LANE_COLUMNS)} FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND lane_key IN (${list(part)})`);
    for (const r of rows) out.set(String(r.lane_key), laneFromRow(r, c.fair));
  }
  return out;
}

const WRITE_COLUMNS = [
  'queue', 'lane_key', 'provider_key', 'account_id', 'tenant_id', 'concurrency_key', 'ready',
  'h1', 'h2', 'h_run_at', 'h_created_at', 'h_seq', 'h_priority', 'parked_on', 'parked_until',
];
const UPDATE_COLUMNS = WRITE_COLUMNS.slice(6);

/** Writes changed lanes with one upsert per 500 lanes (queue lock held). */
export async function writeLanes(x: Exec, c: StoreContext, lanes: Iterable<LaneState>): Promise<void> {
  for (const s of writeLanesSql(c, lanes)) await run(x, s);
}

/** The upserts of writeLanes; marks the lanes clean. */
export function writeLanesSql(c: StoreContext, lanes: Iterable<LaneState>): Sql[] {
  const dirty = [...lanes].filter((l) => l.dirty);
  const out: Sql[] = [];
  for (const part of chunks(dirty, 500)) {
    const values: Sql[] = part.map((l) => {
      const h = l.head;
      const k = h ? orderColumns(h, c.aging, c.fair) : null;
      return sql`(${list([
        c.queue, l.laneKey, l.keys.provider_key, l.keys.account_id, l.keys.tenant_id, l.keys.concurrency_key,
        isReady(l) ? 1 : 0, k ? c.big(k.k1) : null, k ? c.big(k.k2) : null, h?.runAt ?? null, h?.createdAt ?? null,
        h?.seq ?? null, h?.priority ?? null, l.parkedOn, l.parkedUntil,
      ])})`;
    });
    out.push(
      sql`INSERT INTO ${raw(c.t.lanes)} (${raw(WRITE_COLUMNS.join(', '))}) VALUES ${join(values, ', ')}
        ${raw(c.d.onConflictUpdate(['queue', 'lane_key'], UPDATE_COLUMNS))}`,
    );
    for (const l of part) l.dirty = false;
  }
  return out;
}

/**
 * The best `n` merged tasks of each lane of `wants`, locked FOR UPDATE (PostgreSQL / MySQL), best
 * first. Reads the partial lane index (queue, lane_key, k1, k2, run_at, created_at, seq) WHERE
 * PENDING_SUBMIT and merged (MySQL: the status-leading index), so it visits `n` index entries
 * per lane. MySQL: several lanes in ONE statement, a UNION ALL of each lane's locking read (its
 * rows sorted here: a UNION's order is not its parts').
 * A row changed by a concurrent cancel / changePriority while we waited for its lock drops
 * out of a PostgreSQL `LIMIT ... FOR UPDATE` result (the LIMIT counted it), so there a short
 * result is read once more before the lane is believed exhausted. InnoDB's locking read
 * re-reads the latest version and keeps scanning, so it has no such gap.
 */
export async function laneTasks(x: Exec, c: StoreContext, wants: ReadonlyArray<{ laneKey: string; n: number }>): Promise<Row[][]> {
  const lock = raw(c.d.rowLocks ? ' FOR UPDATE' : '');
  const one = (laneKey: string, n: number) =>
    sql`SELECT ${raw(TASK_COLS)} FROM ${raw(c.t.tasks)}
        WHERE queue = ${c.queue} AND lane_key = ${laneKey} AND status = 'PENDING_SUBMIT' AND staged = 0
        ORDER BY ${raw(ORDER_COLUMNS)} LIMIT ${raw(String(n))}${lock}`;
  if (c.d.kind === 'mysql' && wants.length > 1) {
    const rows = await q(x, join(wants.map((w) => sql`(${one(w.laneKey, w.n)})`), ' UNION ALL '));
    const by = new Map<string, Row[]>(wants.map((w) => [w.laneKey, []]));
    for (const r of rows) by.get(String(r.lane_key))!.push(r);
    const cmp = (a: Row, b: Row) => compareOrder(orderOfRow(a, c.fair), orderOfRow(b, c.fair), c.aging);
    return wants.map((w) => by.get(w.laneKey)!.sort(cmp));
  }
  const out: Row[][] = [];
  for (const w of wants) {
    const read = () => q(x, one(w.laneKey, w.n));
    let rows = await read();
    if (c.d.kind === 'postgres' && rows.length < w.n) {
      for (;;) {
        const again = await read();
        if (again.length === rows.length) break;
        rows = again;
        if (rows.length >= w.n) break;
      }
    }
    out.push(rows);
  }
  return out;
}
