import type { Fence, Task } from '../../../core/task';
import { TaskStatus } from '../../../core/task';
import type { CompletionOutcome } from '../../../core/task-store.port';
import { q, run, type StoreContext } from '../context';
import { retryOnConflict, writesLater, type Exec, type Row } from '../db';
import { laneKeysOf, num, rowToTask, slotKeys, TASK_COLUMNS } from '../rows';
import { PG_TASK_RESULT, perTables, pgCompleteLeasedFunctionName } from '../schema/pg-functions';
import type { LeasedRow } from '../context';
import { TurnBatcher } from '../../shared/turn-batcher';
import { fencedWrite, whyRejected, type FencedWrite } from './fenced-write';
import { join, list, raw, sql, type Sql } from './sql';

export interface Pending {
  fence: Fence;
  outcome: CompletionOutcome;
  now: number | null;
}

const MAX_BATCH = 500;

/** sendPgLeased's statement (see there). */
const completeLeasedText = perTables(
  (t) => `SELECT f.o_kind, f.id, f.finished_at, f.k2, CASE WHEN f.o_kind = 2 THEN row_to_json(f)::text END AS whole
      FROM ${pgCompleteLeasedFunctionName(t)}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS f(o_kind, ${PG_TASK_RESULT.map(([n]) => n).join(', ')})`,
);

/**
 * A kind-2 row of complete_leased as sent by sendPgLeased: the function's row as JSON (numbers
 * as JSON numbers: row_to_json writes bigint digits, every bigint column here is a time, a
 * sequence value or a count, far below 2^53; texts as strings, NULL as null), except k2 (a fair
 * tag may pass 2^53), taken from its own column (a decimal string).
 */
function wholeRow(r: Row): Row {
  return { ...(JSON.parse(String(r.whole)) as Row), k2: r.k2 };
}

function resultJson(o: CompletionOutcome): string | null {
  return o.result === undefined ? null : JSON.stringify(o.result);
}

/** attempts added by a complete: 1 for a failed submit attempt. */
function attemptOf(o: CompletionOutcome): number {
  return o.attempt ? 1 : 0;
}
const LIVE: readonly TaskStatus[] = [TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.RUNNING];

/**
 * One complete() as a plain fenced UPDATE (SQLite; the PostgreSQL and MySQL batches write the same): terminal
 * status, result, error, finished_at, attempts + 1 for a failed submit attempt, lease and
 * next_poll_at cleared, slots released.
 */
export function completeOne(c: StoreContext, fence: Fence, outcome: CompletionOutcome): Promise<Task> {
  return fencedWrite(c, fence, completeWrite(c, outcome));
}

/** completeOne's fenced write. */
export function completeWrite(c: StoreContext, outcome: CompletionOutcome): FencedWrite {
  const now = c.nowSql();
  return {
    set: sql`status = ${outcome.status}, result = ${resultJson(outcome)}, error = ${outcome.error ?? null}, finished_at = ${now},
      attempts = attempts + ${attemptOf(outcome)}, lease_owner = NULL, lease_id = NULL, lease_until = NULL, next_poll_at = NULL`,
    from: LIVE,
    release: true,
    op: 'complete',
  };
}

/**
 * complete() on PostgreSQL and MySQL, gathered per event-loop turn (shared/turn-batcher.ts: a
 * worker's handlers finishing together make one round trip instead of one each, MySQL: four).
 * PostgreSQL: ONE call of `<prefix>complete_leased` (schema/postgres/1-complete-leased.sql). MySQL: one short
 * transaction: the rows read FOR UPDATE, fences checked, one single-table UPDATE of the batch by
 * id (each column one value, or a CASE on id where the calls differ: a multi-table UPDATE joined
 * to JSON_TABLE cost ~0.5 ms more per statement on MariaDB 10.11), one INSERT of their `releases`. Every task is still its
 * own fenced write with its own result (a stale fence rejects only that call); the clock is read
 * per call when a test clock is injected. A batch that fails as a whole is sent again call by
 * call, so an error reaches only the calls it belongs to (a deadlock, one bad row).
 */
export class CompleteBatcher {
  private readonly batcher = new TurnBatcher<Pending, Task>({
    maxBatch: MAX_BATCH,
    keyOf: (p) => p.fence.id,
    send: (items) => this.send(items),
    onFailure: 'alone',
  });

  constructor(private readonly c: StoreContext) {}

  complete(fence: Fence, outcome: CompletionOutcome): Promise<Task> {
    return this.batcher.add({ fence, outcome, now: this.c.clock ? this.c.clock.now() : null });
  }

  /** Sends what is gathered and waits for every batch in flight (close). */
  drain(): Promise<void> {
    return this.batcher.drain();
  }

  /** One batch: each call's task as written, or why its fence was refused. */
  private async send(items: readonly Pending[]): Promise<Array<Task | Promise<Task>>> {
    // MySQL: the rows' read begins the transaction and the UPDATE and releases, whose counts nobody
    // reads, end it: on MariaDB two round trips (db.ts begin, writesLater), was four
    const rows = await (this.c.d.kind === 'postgres'
      ? this.sendPgLeased(items)
      : this.c.db.tx((x) => completeMysqlIn(writesLater(x), this.c, items), {
          // MariaDB: READ COMMITTED costs no round trip there (db.ts), and its locking read then
          // keeps no lock on a row it reads but does not match (a small table is scanned whole)
          readCommitted: this.c.db.batching,
          begin: completeReadSql(this.c, items),
        }));
    return completeAnswers(this.c, items, rows);
  }

  /**
   * PostgreSQL: `<prefix>complete_leased` (schema/postgres/1-complete-leased.sql). A call whose task this store claimed (lease cache,
   * same fence) sends the row's ctid and gets back only (id, finished_at): its row is the
   * cached one plus this write. A cached call that matched nothing (its row moved) is sent
   * again without the ctid; the rows returned to run() are whole either way.
   * The statement selects 4 of the function's columns: kind, id, finished_at, and for a kind-2
   * row (found by id, not cached) the whole row as one JSON text. Every kind-1 row is all NULL
   * but those two, and the driver pays per column and row (row description, one object of all
   * columns per row): 32 columns cost about 1 µs of Node CPU per completed task.
   */
  private async sendPgLeased(items: readonly Pending[]): Promise<Row[]> {
    const c = this.c;
    const text = completeLeasedText(c.t);
    const send = async (batch: readonly Pending[], cached: Array<LeasedRow | undefined>) =>
      (await this.pgCall(text, [c.queue, ...pgCompleteArgs(batch, cached)])).map((r) => ({ kind: Number(r.o_kind), id: String(r.id), finishedAt: r.finished_at, whole: () => wholeRow(r) }));
    const cached = items.map((p) => c.leased.match(p.fence));
    const { rows, again } = pgCompleteRows(c, items, cached, await send(items, cached));
    if (again.length > 0) rows.push(...(await send(again, again.map(() => undefined))).map((r) => r.whole()));
    return rows;
  }

  private pgCall(text: string, values: unknown[]): Promise<Row[]> {
    return retryOnConflict(this.c.d, () => this.c.pg!.rows(text, values));
  }
}

/**
 * MySQL / MariaDB, in the caller's transaction `x`: the batch's rows are read and locked first (with the clock), the fences
 * checked here, and only the matching rows written, so each call learns exactly whether its
 * own write happened; the rows returned are the read rows with the written values.
 */
export async function completeMysqlIn(x: Exec, c: StoreContext, items: readonly Pending[]): Promise<Row[]> {
  const T = raw(c.t.tasks);
  const want = new Map(items.map((p) => [p.fence.id, p]));
  const read = x.begun ?? (await q(x, completeReadSql(c, items)));
  const rows: Row[] = [];
  for (const r of read) {
    const p = want.get(String(r.id))!;
    if (r.lease_id !== p.fence.leaseId || Number(r.version) !== p.fence.version || !LIVE.includes(String(r.status) as TaskStatus)) continue;
    const now = p.now ?? Number(r.pq_now);
    rows.push({
      ...r,
      status: p.outcome.status,
      result: resultJson(p.outcome),
      error: p.outcome.error ?? null,
      finished_at: now,
      attempts: Number(r.attempts) + attemptOf(p.outcome),
      lease_owner: null,
      lease_id: null,
      lease_until: null,
      next_poll_at: null,
      version: Number(r.version) + 1,
      updated_at: now,
    });
  }
  if (rows.length === 0) return rows;
  const ids = rows.map((r) => r.id);
  const byRow = (k: string) => perRow(ids, rows.map((r) => r[k]));
  await run(
    x,
    sql`UPDATE ${T} SET status = ${byRow('status')}, result = ${byRow('result')}, error = ${byRow('error')},
        finished_at = ${byRow('finished_at')}, attempts = ${byRow('attempts')}, lease_owner = NULL, lease_id = NULL,
        lease_until = NULL, next_poll_at = NULL, version = version + 1, updated_at = ${byRow('finished_at')}
      WHERE queue = ${c.queue} AND id IN (${list(ids)})`,
  );
  const freed = rows.filter((r) => slotKeys(laneKeysOf(r)).length > 0);
  if (freed.length > 0) {
    await run(x, sql`INSERT INTO ${raw(c.t.releases)} (queue, lane_key) VALUES ${join(freed.map((r) => sql`(${c.queue}, ${String(r.lane_key)})`), ', ')}`);
  }
  return rows;
}

/** completeMysqlIn's read: the batch's rows, locked, with the clock. */
export function completeReadSql(c: StoreContext, items: readonly Pending[]): Sql {
  return sql`SELECT ${raw(TASK_COLUMNS)}, ${raw(c.d.nowMs)} AS pq_now FROM ${raw(c.t.tasks)} WHERE id IN (${list([...new Set(items.map((p) => p.fence.id))])}) AND queue = ${c.queue} FOR UPDATE`;
}

/**
 * One column's new value for the rows `ids` of an UPDATE: the value when every row gets the same
 * one (the usual batch: all SUCCEEDED at one time, no result), else `CASE id WHEN ... END`.
 */
function perRow(ids: readonly unknown[], values: readonly unknown[]): Sql {
  if (values.every((v) => v === values[0])) return sql`${values[0]}`;
  return sql`CASE id ${join(ids.map((id, i) => sql`WHEN ${id} THEN ${values[i]}`), ' ')} END`;
}

/** Each call's task as written (a row of `rows`, by id), or a rejected promise of why its fence was refused. */
export function completeAnswers(c: StoreContext, items: readonly Pending[], rows: readonly Row[]): Array<Task | Promise<Task>> {
  const byId = new Map(rows.map((r) => [String(r.id), r]));
  return items.map((p) => {
    const r = byId.get(p.fence.id);
    return r ? rowToTask(r, c.fair) : whyRejected(c, p.fence, { from: LIVE, op: 'complete' }).then((e) => Promise.reject(e));
  });
}

/** complete_leased's arguments after p_queue; `cached`: the lease cache's rows the calls' fences match (their ctids go along). */
export function pgCompleteArgs(batch: readonly Pending[], cached: ReadonlyArray<LeasedRow | undefined>): unknown[] {
  return [
    batch.map((p) => p.now),
    batch.map((p) => p.fence.id),
    cached.map((k) => k?.ctid ?? null),
    batch.map((p) => p.fence.leaseId),
    batch.map((p) => p.fence.version),
    batch.map((p) => p.outcome.status),
    batch.map((p) => resultJson(p.outcome)),
    batch.map((p) => p.outcome.error ?? null),
    batch.map((p) => attemptOf(p.outcome)),
  ];
}

/** One row of complete_leased as the caller selected it: kind 1 (id, finishedAt) or 2 (`whole()`: the task row). */
export interface PgCompleteRow {
  kind: number;
  id: string;
  finishedAt: unknown;
  whole(): Row;
}

/**
 * complete_leased's rows as the rows written: a kind-1 row is the cached row plus the write. A
 * cached call that matched nothing (its row moved) is in `again`, to be sent without its ctid.
 */
export function pgCompleteRows(
  c: StoreContext,
  items: readonly Pending[],
  cached: ReadonlyArray<LeasedRow | undefined>,
  got: readonly PgCompleteRow[],
): { rows: Row[]; again: Pending[] } {
  const out: Row[] = [];
  const byId = new Map<string, PgCompleteRow>();
  for (const r of got) byId.set(r.id, r);
  const again: Pending[] = [];
  items.forEach((p, i) => {
    const k = cached[i];
    if (k) c.leased.delete(p.fence.id);
    const r = byId.get(p.fence.id);
    if (!r) {
      if (k) again.push(p);
      return;
    }
    if (r.kind === 2) {
      out.push(r.whole());
      return;
    }
    const at = r.finishedAt;
    out.push({
      ...k!.row,
      status: p.outcome.status,
      result: resultJson(p.outcome),
      error: p.outcome.error ?? null,
      finished_at: at,
      updated_at: at,
      attempts: num(k!.row.attempts) + attemptOf(p.outcome),
      lease_owner: null,
      lease_id: null,
      lease_until: null,
      next_poll_at: null,
      version: p.fence.version + 1,
    });
  });
  return { rows: out, again };
}
