import type { TaskStatus } from '../../../core/task';
import type { StoreContext } from '../context';
import { list, sql, type Sql } from './sql';

/**
 * `WHERE` of the admin reads by status (list, stats): the queue's tasks in these statuses.
 * PostgreSQL (schema v2): through the expression index `(queue || chr(31) || status, seq)`,
 * which no hot query can use (see schema/pg-functions.ts); elsewhere the index
 * (queue, status, seq).
 */
export function byStatus(c: StoreContext, statuses: readonly TaskStatus[]): Sql {
  if (c.d.kind === 'postgres') return sql`(queue || chr(31) || status) IN (${list(statuses.map((s) => `${c.queue}\u001f${s}`))})`;
  return sql`queue = ${c.queue} AND status IN (${list(statuses)})`;
}
