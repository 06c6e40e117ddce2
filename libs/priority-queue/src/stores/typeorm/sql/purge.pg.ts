import type { StoreContext } from '../context';
import { TERMINAL_STATUSES } from '../../../core/task';

/**
 * purge on PostgreSQL: deletes up to `limit` terminal tasks finished at or before `olderThan`,
 * oldest first (finished_at, then seq), read through tasks_trim (queue, type, status,
 * finished_at, seq), the removal trim's index. The schema keeps no (queue, finished_at) index
 * of its own on PostgreSQL (schema/postgres/1-tables.sql): every complete writes an entry into
 * each index whose predicate its finished row meets, and that second index of finished rows
 * cost each complete ~2 shared blocks, for a statement a process runs once a minute.
 *
 * A loose index scan: the recursive part steps through the queue's (type, status) groups, one
 * index probe each (a group after the last one: a row comparison on the index's columns 2-3);
 * per terminal group its `limit` oldest rows due, in index order; of those the `limit` oldest
 * overall. Index reads: groups + rows taken, however many finished rows are kept.
 * Locks: the deleted rows only.
 */
export async function purgePg(c: StoreContext, olderThan: number, n: number): Promise<number> {
  const T = c.t.tasks;
  const terminal = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');
  const text = `WITH RECURSIVE g AS (
      (SELECT type, status FROM ${T} WHERE queue = $1 AND finished_at IS NOT NULL ORDER BY type, status LIMIT 1)
      UNION ALL
      SELECT x.type, x.status FROM g CROSS JOIN LATERAL (SELECT type, status FROM ${T}
        WHERE queue = $1 AND finished_at IS NOT NULL AND (type, status) > (g.type, g.status) ORDER BY type, status LIMIT 1) x)
    DELETE FROM ${T} WHERE id IN (
      SELECT o.id FROM g CROSS JOIN LATERAL (SELECT id, finished_at, seq FROM ${T}
          WHERE queue = $1 AND type = g.type AND status = g.status AND finished_at IS NOT NULL AND finished_at <= $2
          ORDER BY finished_at, seq LIMIT $3) o
        WHERE g.status IN (${terminal})
        ORDER BY o.finished_at, o.seq LIMIT $3)`;
  return c.db.run(text, [c.queue, olderThan, n]);
}
