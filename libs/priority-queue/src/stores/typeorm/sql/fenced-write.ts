import { InvalidStateError, StaleLeaseError, TaskNotFoundError } from '../../../core/errors';
import type { Fence, Task, TaskStatus } from '../../../core/task';
import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { laneKeysOf, rowToTask, slotKeys, TASK_COLUMNS } from '../rows';
import { byId } from './by-id';
import { list, raw, sql, type Sql } from './sql';
import { markStaged } from './stage-marks';

export interface FencedWrite {
  /** SET list without version / updated_at (added here). Use `c.nowSql()` for the clock. */
  set: Sql;
  /** Statuses the task must be in. */
  from: readonly TaskStatus[];
  /** The task leaves SUBMITTING / SUBMITTED / RUNNING: append a release of its slots. */
  release: boolean;
  /** Name of the operation for the InvalidStateError message. */
  op: string;
  /** The write may stage the task (retry): MySQL writes a stage mark (sql/stage-marks.ts). */
  stages?: boolean;
}

/** A task of this row's lane holds slots (account, tenant or concurrency key) while in flight. */
export const HOLDS_SLOTS = '(account_id IS NOT NULL OR tenant_id IS NOT NULL OR concurrency_key IS NOT NULL)';

/**
 * Every write of a lease holder (renew, markSubmitted, recordPoll, complete, retry): one UPDATE
 * guarded by the fence (id, lease_id, version) and the expected statuses, plus, when the task
 * frees slots (its lane has an account, tenant or concurrency key), one appended `releases` row (applied to the counters by the next claim, so
 * the write never waits for the queue lock).
 *
 * Locks: the task row only. PostgreSQL: a single statement (data-modifying CTE); SQLite:
 * UPDATE ... RETURNING in BEGIN IMMEDIATE; MySQL: UPDATE, INSERT ... SELECT, SELECT in one
 * transaction.
 */
export async function fencedWrite(c: StoreContext, fence: Fence, w: FencedWrite): Promise<Task> {
  const T = raw(c.t.tasks);
  const set = sql`${w.set}, version = version + 1, updated_at = ${c.nowSql()}`;
  const where = sql`${byId(c, fence.id)} AND lease_id = ${fence.leaseId} AND version = ${fence.version} AND status IN (${list(w.from)})`;
  let row: Row | undefined;
  if (c.d.kind === 'postgres') {
    const release = w.release
      ? sql`, r AS (INSERT INTO ${raw(c.t.releases)} (queue, lane_key) SELECT queue, lane_key FROM u WHERE ${raw(HOLDS_SLOTS)})`
      : sql``;
    const s = sql`WITH u AS (UPDATE ${T} SET ${set} WHERE ${where} RETURNING queue, ${raw(TASK_COLUMNS)})${release} SELECT * FROM u`;
    [row] = await c.pg!.rows(c.d.placeholders(s.text), s.params);
  } else {
    row = await c.db.tx((x) => fencedWriteIn(x, c, fence, w), { readCommitted: false });
  }
  if (row) return rowToTask(row, c.fair);
  throw await whyRejected(c, fence, w);
}

/** fencedWrite's statements on MySQL and SQLite, in the caller's transaction `x`: the row written, or undefined when the fence matched nothing. */
export async function fencedWriteIn(x: Exec, c: StoreContext, fence: Fence, w: FencedWrite): Promise<Row | undefined> {
  const T = raw(c.t.tasks);
  const set = sql`${w.set}, version = version + 1, updated_at = ${c.nowSql()}`;
  const where = sql`${byId(c, fence.id)} AND lease_id = ${fence.leaseId} AND version = ${fence.version} AND status IN (${list(w.from)})`;
  let r: Row | undefined;
  if (c.d.returning) [r] = await q(x, sql`UPDATE ${T} SET ${set} WHERE ${where} RETURNING ${raw(TASK_COLUMNS)}`);
  else if ((await run(x, sql`UPDATE ${T} SET ${set} WHERE ${where}`)) > 0)
    [r] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE id = ${fence.id}`);
  if (r && w.release && slotKeys(laneKeysOf(r)).length > 0) {
    await run(x, sql`INSERT INTO ${raw(c.t.releases)} (queue, lane_key) VALUES (${c.queue}, ${String(r.lane_key)})`);
  }
  if (r && w.stages && String(r.status) === 'PENDING_SUBMIT') await markStaged(x, c, Number(r.run_at));
  return r;
}

function spread(s: Sql): [string, unknown[]] {
  return [s.text, [...s.params]];
}

/** Why a fenced write matched no row: missing task, stale fence, or a status the operation does not apply to. */
export async function whyRejected(c: StoreContext, fence: Fence, w: Pick<FencedWrite, 'from' | 'op'>): Promise<Error> {
  const [r] = await c.db.rows(...spread(sql`SELECT status, lease_id, version FROM ${raw(c.t.tasks)} WHERE ${byId(c, fence.id)}`));
  if (!r) return new TaskNotFoundError(fence.id);
  if (String(r.lease_id) !== fence.leaseId || Number(r.version) !== fence.version) return new StaleLeaseError(fence.id);
  return new InvalidStateError(`Task ${fence.id} is ${String(r.status)}: ${w.op} applies to ${w.from.join(' / ')} tasks only.`);
}
