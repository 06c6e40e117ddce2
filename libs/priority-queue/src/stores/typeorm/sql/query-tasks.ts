import { compareOrder, type OrderFields } from '../../../core/order-key';
import { TaskStatus, type Task } from '../../../core/task';
import { encodeCursor, positionAfter, searchPage, type QueryPosition, type ResolvedTaskQuery, type TaskPage } from '../../../core/task-query';
import { q, type StoreContext } from '../context';
import type { Exec } from '../db';
import { ORDER_COLUMNS, orderOfRow, orderTuple } from '../order-columns';
import { chunks, num, rowToTask, TASK_COLUMNS } from '../rows';
import { statusSources } from './by-status';
import { pendingLanes, smallReads } from './pending-lanes';
import { join, list, raw, sql, type Sql } from './sql';

const ORDER = ORDER_COLUMNS;

/**
 * query (core/task-query.ts), every read an index range that starts at the cursor, reads only
 * (one transaction for a consistent clock and lane list, no lock):
 * - PENDING_SUBMIT, due: per lane that may hold due tasks (sql/pending-lanes.ts) its first
 *   `limit + 1` tasks after the cursor through the lane index (queue, lane_key, k1, k2, run_at,
 *   created_at, seq); PostgreSQL in one statement (LATERAL), MySQL / SQLite as UNION ALL of
 *   per-lane reads, 200 lanes per statement; plus the due staged tasks (staged index, sorted);
 *   merged in DESIGN §2 order. Lanes of other providers, accounts or tenants are not read.
 *   Then, while the page is not full, the not-yet-due ones by (run_at, seq) (staged index).
 * - other statuses: by seq descending through the status index (by-status.ts), from the cursor.
 * Filters the indexes do not serve (type, priority range, tenant / provider / account outside
 * PENDING_SUBMIT) are conditions of those reads. A page costs O(lanes + limit) index reads
 * plus the rows the filters skip.
 */
export async function queryTasks(c: StoreContext, query: ResolvedTaskQuery): Promise<TaskPage> {
  const T = raw(c.t.tasks);
  if (query.search !== undefined) {
    return c.db.tx(async (x) => {
      const now = await c.now(x);
      const rows = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE queue = ${c.queue} AND (id = ${query.search} OR idempotency_key = ${query.search})`);
      return searchPage(rows.map((r) => rowToTask(r, c.fair)), query, now, c.aging);
    });
  }
  return c.db.tx(async (x) => {
    await smallReads(x, c);
    const now = await c.now(x);
    const want = query.limit + 1;
    if (query.status === TaskStatus.PENDING_SUBMIT && scansUnindexed(c, query)) {
      const page = await budgetedPendingPage(x, c, query, now, want);
      if (page.stop !== null && page.tasks.length <= query.limit) return { tasks: page.tasks, nextCursor: encodeCursor(query.status, page.stop) };
      if (page.tasks.length <= query.limit) return { tasks: page.tasks, nextCursor: null };
      return { tasks: page.tasks.slice(0, query.limit), nextCursor: encodeCursor(query.status, positionAfter(page.tasks[query.limit - 1], query.status, now)) };
    }
    const tasks = query.status === TaskStatus.PENDING_SUBMIT ? await pendingPage(x, c, query, now, want) : await seqPage(x, c, query, want);
    if (tasks.length <= query.limit) return { tasks, nextCursor: null };
    return { tasks: tasks.slice(0, query.limit), nextCursor: encodeCursor(query.status, positionAfter(tasks[query.limit - 1], query.status, now)) };
  });
}

function filters(q: ResolvedTaskQuery, lanesChecked = false): Sql {
  const parts: Sql[] = [];
  if (q.type !== undefined) parts.push(sql` AND type = ${q.type}`);
  if (!lanesChecked && q.tenantId !== undefined) parts.push(sql` AND tenant_id = ${q.tenantId}`);
  if (!lanesChecked && q.providerKey !== undefined) parts.push(sql` AND provider_key = ${q.providerKey}`);
  if (!lanesChecked && q.accountId !== undefined) parts.push(sql` AND account_id = ${q.accountId}`);
  if (q.minPriority !== undefined) parts.push(sql` AND priority >= ${q.minPriority}`);
  if (q.maxPriority !== undefined) parts.push(sql` AND priority <= ${q.maxPriority}`);
  return parts.length ? join(parts, '') : sql``;
}

async function seqPage(x: Exec, c: StoreContext, query: ResolvedTaskQuery, want: number): Promise<Task[]> {
  const T = raw(c.t.tasks);
  const before = query.position?.phase === 'seq' ? sql` AND seq < ${query.position.before}` : sql``;
  const parts = statusSources(c, [query.status]).map(
    (w, i) => sql`SELECT * FROM (SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${w}${before}${filters(query)} ORDER BY seq DESC LIMIT ${raw(String(want))}) s${raw(String(i))}`,
  );
  const rows = await q(x, join(parts, ' UNION ALL '));
  return rows.map((r) => rowToTask(r, c.fair)).sort((a, b) => b.seq - a.seq).slice(0, want);
}

async function pendingPage(x: Exec, c: StoreContext, query: ResolvedTaskQuery, now: number, want: number): Promise<Task[]> {
  const T = raw(c.t.tasks);
  const p = query.position;
  const out: Task[] = [];
  if (p === null || p.phase === 'due') {
    let after = sql``;
    if (p !== null) after = sql` AND (${raw(ORDER)}) > ${orderTuple(c, p.after)}`;
    const f = filters(query, true);
    const lanes = await laneKeysFor(x, c, query, now);
    // the best `want` keys of the lanes and of the due staged tasks (narrow rows, one ORDER BY
    // LIMIT over all of them), then those tasks whole by id
    const keys = sql`SELECT id, ${raw(ORDER)} FROM ${T}`;
    const limit = raw(String(want));
    const pending = sql`queue = ${c.queue} AND status = 'PENDING_SUBMIT'`;
    const staged = sql`SELECT * FROM (${keys} WHERE ${pending} AND staged = 1 AND run_at <= ${now}${after}${filters(query)}
        ORDER BY ${raw(ORDER)} LIMIT ${limit}) st`;
    const best = (parts: Sql[]) => sql`SELECT id FROM (${join(parts, ' UNION ALL ')}) u ORDER BY ${raw(ORDER)} LIMIT ${limit}`;
    const ids: string[] = [];
    if (c.d.kind === 'postgres') {
      const lateral = sql`SELECT t.* FROM unnest(${lanes}::varchar[]) AS l(lane_key) CROSS JOIN LATERAL (${keys}
          WHERE ${pending} AND staged = 0 AND lane_key = l.lane_key${after}${f} ORDER BY ${raw(ORDER)} LIMIT ${limit}) t`;
      for (const r of await q(x, best([lateral, staged]))) ids.push(String(r.id));
    } else {
      const groups = chunks(lanes, 200);
      if (groups.length === 0) groups.push([]);
      for (const [g, part] of groups.entries()) {
        const reads = part.map(
          (lane, i) => sql`SELECT * FROM (${keys} WHERE ${pending} AND staged = 0 AND lane_key = ${lane}${after}${f}
            ORDER BY ${raw(ORDER)} LIMIT ${limit}) l${raw(String(i))}`,
        );
        if (g === 0) reads.push(staged);
        for (const r of await q(x, best(reads))) ids.push(String(r.id));
      }
    }
    const due = await tasksByIds(x, c, ids);
    out.push(...due.sort((a, b) => compareOrder(a, b, c.aging)).slice(0, want));
  }
  if (out.length < want) {
    const from = p?.phase === 'later' && p.runAt > now ? sql` AND (run_at, seq) > (${p.runAt}, ${p.seq})` : sql``;
    const later = await q(
      x,
      sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at > ${now}${from}${filters(query)}
        ORDER BY run_at, seq LIMIT ${raw(String(want - out.length))}`,
    );
    out.push(...later.map((r) => rowToTask(r, c.fair)));
  }
  return out;
}

/** Whether a pending page filters on what no index of the lanes serves: the type, or the priority under aging. */
function scansUnindexed(c: StoreContext, q: ResolvedTaskQuery): boolean {
  return q.type !== undefined || (c.aging > 0 && (q.minPriority !== undefined || q.maxPriority !== undefined));
}

/** Rows each lane (and the due staged tasks) may read for one page of a filter no index serves. */
const LANE_BUDGET = 64;
const LATER_BUDGET = 2000;

/**
 * A pending page filtered by the type (or by priority under aging): each lane reads at most
 * LANE_BUDGET keys after the cursor, with the filter as a flag; a lane that read its whole
 * budget may hold more tasks, so only the keys up to the lowest such last key (the frontier)
 * are certain. The page is the matching keys up to the frontier; when they are fewer than the
 * page, it ends short with a cursor at the frontier (core/task-query.ts allows that), so a page
 * costs at most lanes x LANE_BUDGET index entries whatever the filter's selectivity.
 */
async function budgetedPendingPage(x: Exec, c: StoreContext, query: ResolvedTaskQuery, now: number, want: number): Promise<{ tasks: Task[]; stop: QueryPosition | null }> {
  const T = raw(c.t.tasks);
  const p = query.position;
  // the filters as a flag: without the lane's own keys (its lane was chosen by them), and with them
  const okInLane = sql`CASE WHEN 1 = 1${filters(query, true)} THEN 1 ELSE 0 END`;
  const ok = sql`CASE WHEN 1 = 1${filters(query)} THEN 1 ELSE 0 END`;
  const ids: string[] = [];
  let stop: QueryPosition | null = null;
  const compareKeys = (a: OrderFields, b: OrderFields) => compareOrder(a, b, c.aging);
  if (p === null || p.phase === 'due') {
    let after = sql``;
    if (p !== null) after = sql` AND (${raw(ORDER)}) > ${orderTuple(c, p.after)}`;
    const budget = Math.max(want, LANE_BUDGET);
    // rd: which read a row comes from (a lane's, or the due staged tasks' across lanes)
    const cols = (rd: number, flag: Sql) => sql`SELECT ${raw(String(rd))} AS rd, id, priority, ${raw(ORDER)}, ${flag} AS ok FROM ${T}`;
    const pending = sql`queue = ${c.queue} AND status = 'PENDING_SUBMIT'`;
    const lanes = await laneKeysFor(x, c, query, now);
    const reads: Sql[] = lanes.map(
      (lane, i) => sql`SELECT * FROM (${cols(i, okInLane)} WHERE ${pending} AND staged = 0 AND lane_key = ${lane}${after} ORDER BY ${raw(ORDER)} LIMIT ${raw(String(budget))}) l${raw(String(i))}`,
    );
    reads.push(sql`SELECT * FROM (${cols(lanes.length, ok)} WHERE ${pending} AND staged = 1 AND run_at <= ${now}${after} ORDER BY ${raw(ORDER)} LIMIT ${raw(String(budget))}) st`);
    const rows: Array<{ group: string; id: string; key: OrderFields; ok: boolean }> = [];
    for (const part of chunks(reads, 200)) {
      for (const r of await q(x, join(part, ' UNION ALL '))) rows.push({ group: String(num(r.rd)), id: String(r.id), key: orderOfRow(r, c.fair), ok: num(r.ok) === 1 });
    }
    // the frontier: the lowest last key of a read that used its whole budget
    const perRead = new Map<string, { n: number; last: OrderFields }>();
    for (const r of rows) {
      const cur = perRead.get(r.group) ?? { n: 0, last: r.key };
      cur.n++;
      if (compareKeys(r.key, cur.last) > 0) cur.last = r.key;
      perRead.set(r.group, cur);
    }
    let frontier: OrderFields | null = null;
    for (const v of perRead.values()) if (v.n >= budget && (frontier === null || compareKeys(v.last, frontier) < 0)) frontier = v.last;
    const found = rows.filter((r) => r.ok && (frontier === null || compareKeys(r.key, frontier) <= 0)).sort((a, b) => compareKeys(a.key, b.key));
    ids.push(...found.slice(0, want).map((r) => r.id));
    if (frontier !== null && ids.length < want) {
      stop = { phase: 'due', after: frontier };
    }
  }
  const tasks = await tasksByIds(x, c, ids);
  tasks.sort((a, b) => compareOrder(a, b, c.aging));
  if (stop === null && tasks.length < want) {
    const from = p?.phase === 'later' && p.runAt > now ? sql` AND (run_at, seq) > (${p.runAt}, ${p.seq})` : sql``;
    const rows = await q(
      x,
      sql`SELECT id, run_at, seq, ${ok} AS ok FROM ${T} WHERE queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at > ${now}${from}
        ORDER BY run_at, seq LIMIT ${raw(String(LATER_BUDGET))}`,
    );
    const matching = rows.filter((r) => num(r.ok) === 1).slice(0, want - tasks.length);
    const later = await tasksByIds(x, c, matching.map((r) => String(r.id)));
    later.sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
    tasks.push(...later);
    const last = rows[rows.length - 1];
    if (tasks.length < want && rows.length === LATER_BUDGET) stop = { phase: 'later', runAt: num(last.run_at), seq: num(last.seq) };
  }
  return { tasks, stop };
}

/** The lanes a pending page reads: those that may hold due tasks, of the query's provider / account / tenant. */
async function laneKeysFor(x: Exec, c: StoreContext, query: ResolvedTaskQuery, now: number): Promise<string[]> {
  return (await pendingLanes(x, c, now))
    .filter(
      (l) =>
        (query.providerKey === undefined || l.keys.providerKey === query.providerKey) &&
        (query.accountId === undefined || l.keys.accountId === query.accountId) &&
        (query.tenantId === undefined || l.keys.tenantId === query.tenantId),
    )
    .map((l) => l.laneKey);
}

/** Whole tasks by id (PostgreSQL: the queue as a filter only, so that the id index is the access path, sql/by-id.ts). */
async function tasksByIds(x: Exec, c: StoreContext, ids: readonly string[]): Promise<Task[]> {
  const out: Task[] = [];
  const inQueue = c.d.kind === 'postgres' ? sql`queue || '' = ${c.queue}` : sql`queue = ${c.queue}`;
  for (const part of chunks(ids, 500)) {
    out.push(...(await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${raw(c.t.tasks)} WHERE ${inQueue} AND id IN (${list(part)})`)).map((r) => rowToTask(r, c.fair)));
  }
  return out;
}
