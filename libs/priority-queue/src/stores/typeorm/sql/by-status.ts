import { TaskStatus } from '../../../core/task';
import type { StoreContext } from '../context';
import { join, list, raw, sql, type Sql } from './sql';

/**
 * Statuses the PostgreSQL status index `<prefix>tasks_status_rest` leaves out (its predicate in
 * schema/postgres/1-tables.sql): every task is in one of them right after its create and its
 * claim.
 */
export const PG_STATUS_UNINDEXED = ['PENDING_SUBMIT', 'SUBMITTING'] as const;

/**
 * `WHERE` of the admin reads by status (list, stats): the queue's tasks in these statuses, as
 * one or more conditions that select disjoint rows (their union is the answer), each one an
 * index read:
 * - MySQL / SQLite: the index (queue, status, seq);
 * - PostgreSQL: the expression index `(queue || chr(31) || status, seq)` (which no hot query can
 *   use) for the statuses after SUBMITTING; PENDING_SUBMIT is read through the lane index
 *   (staged = 0) and the staged index (staged = 1), SUBMITTING through the lease index and the
 *   (normally empty) index of SUBMITTING rows without a lease. Status literals are inlined (enum
 *   values) so that the planner can prove each partial index's predicate.
 */
export function statusSources(c: StoreContext, statuses: readonly TaskStatus[]): Sql[] {
  if (c.d.kind !== 'postgres') return [sql`queue = ${c.queue} AND status IN (${list(statuses)})`];
  const byExpression = (ss: readonly TaskStatus[]) => sql`(queue || chr(31) || status) IN (${list(ss.map((s) => `${c.queue}\u001f${s}`))})`;
  const out: Sql[] = [];
  const rest = statuses.filter((s) => !(PG_STATUS_UNINDEXED as readonly string[]).includes(s));
  if (rest.length > 0) {
    const unindexed = raw(PG_STATUS_UNINDEXED.map((s) => `'${s}'`).join(', '));
    out.push(sql`${byExpression(rest)} AND status NOT IN (${unindexed})`);
  }
  if (statuses.includes(TaskStatus.PENDING_SUBMIT)) {
    out.push(sql`queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND staged = 0`);
    out.push(sql`queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND staged = 1`);
  }
  if (statuses.includes(TaskStatus.SUBMITTING)) {
    out.push(sql`queue = ${c.queue} AND status = 'SUBMITTING' AND lease_until IS NOT NULL`);
    out.push(sql`queue = ${c.queue} AND status = 'SUBMITTING' AND lease_until IS NULL`);
  }
  return out;
}

/**
 * A FROM item: the columns `cols` of the queue's tasks in these statuses (statusSources, one
 * SELECT per source joined by UNION ALL), aliased `s`.
 */
export function tasksInStatuses(c: StoreContext, statuses: readonly TaskStatus[], cols: string): Sql {
  const T = raw(c.t.tasks);
  const parts = statusSources(c, statuses).map((w) => sql`SELECT ${raw(cols)} FROM ${T} WHERE ${w}`);
  return sql`(${join(parts, ' UNION ALL ')}) s`;
}
