import type { Task } from '../../../core/task';
import type { ListQuery } from '../../../core/task-store.port';
import type { StoreContext } from '../context';
import { rowToTask, TASK_COLUMNS } from '../rows';
import { byId } from './by-id';
import { statusSources } from './by-status';
import { join, raw, sql } from './sql';

/** get: by the unique index on id. */
export async function getTask(c: StoreContext, id: string): Promise<Task | null> {
  const s = sql`SELECT ${raw(TASK_COLUMNS)} FROM ${raw(c.t.tasks)} WHERE ${byId(c, id)}`;
  const [r] = c.pg ? await c.pg.rows(c.d.placeholders(s.text), s.params) : await c.db.rows(s.text, s.params);
  return r ? rowToTask(r, c.fair) : null;
}

/**
 * list: one status, by seq, keyset paging. Each source of statusSources (by-status.ts) gives
 * its first `limit` rows after `afterSeq`; with several sources (PostgreSQL:
 * PENDING_SUBMIT, SUBMITTING) those are merged and cut again.
 */
export async function listTasks(c: StoreContext, query: ListQuery): Promise<Task[]> {
  const limit = Math.max(0, Math.floor(query.limit));
  if (limit === 0) return [];
  const T = raw(c.t.tasks);
  const tail = sql`AND seq > ${query.afterSeq ?? -1} ORDER BY seq LIMIT ${raw(String(limit))}`;
  const parts = statusSources(c, [query.status]).map((w) => sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE ${w} ${tail}`);
  const s = parts.length === 1 ? parts[0] : sql`SELECT * FROM (${join(parts.map((p) => sql`(${p})`), ' UNION ALL ')}) s ORDER BY seq LIMIT ${raw(String(limit))}`;
  return (await c.db.rows(s.text, s.params)).map((r) => rowToTask(r, c.fair));
}
