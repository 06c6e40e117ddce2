import type { StoreContext } from '../context';
import { purgePg } from './purge.pg';
import { keyColumn } from './row-key';
import { list, raw, sql } from './sql';

/**
 * purge: deletes up to `limit` terminal tasks finished at or before `olderThan`, oldest first,
 * through the partial index (queue, finished_at) (PostgreSQL: purge.pg.ts, through tasks_trim). Terminal rows are in no hot index, so history
 * never slows claims; purge keeps the table (and the list / stats indexes) small.
 * Locks: the deleted rows only.
 */
export async function purge(c: StoreContext, olderThan: number, limit: number): Promise<number> {
  const n = Math.max(0, Math.floor(limit));
  if (n === 0) return 0;
  if (c.d.kind === 'postgres') return purgePg(c, olderThan, n);
  const T = raw(c.t.tasks);
  const key = keyColumn(c);
  const pick = sql`SELECT ${key} FROM ${T} WHERE queue = ${c.queue} AND finished_at IS NOT NULL AND finished_at <= ${olderThan}
    AND status IN ('SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN') ORDER BY finished_at LIMIT ${raw(String(n))}`;
  if (c.d.kind !== 'mysql') {
    const s = sql`DELETE FROM ${T} WHERE ${key} IN (${pick})`;
    return c.db.run(s.text, s.params);
  }
  // MySQL refuses LIMIT in an IN subquery of the same table.
  const seqs = (await c.db.rows<{ seq: unknown }>(pick.text, pick.params)).map((r) => r.seq);
  if (seqs.length === 0) return 0;
  const s = sql`DELETE FROM ${T} WHERE seq IN (${list(seqs)})`;
  return c.db.run(s.text, s.params);
}
