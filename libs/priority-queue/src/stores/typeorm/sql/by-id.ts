import type { StoreContext } from '../context';
import { sql, type Sql } from './sql';

/**
 * `WHERE` of a one-task statement: by the unique index on `id`, the task's queue checked as a
 * filter. On PostgreSQL the queue comparison is written so that no index can use it: on a
 * table without statistics (new, not yet analyzed) the planner otherwise rates the index
 * (queue, status, seq) as cheap as the unique index on id and walks the whole queue per call.
 */
export function byId(c: StoreContext, id: string): Sql {
  return c.d.kind === 'postgres' ? sql`id = ${id} AND queue || '' = ${c.queue}` : sql`id = ${id} AND queue = ${c.queue}`;
}
