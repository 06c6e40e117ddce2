import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { TASK_COLUMNS } from '../rows';
import { list, raw, sql, type Sql } from './sql';
import { keyColumn } from './row-key';

export interface UpdateReturning {
  /** Which task rows (without the queue filter, added here). */
  where: Sql;
  set: Sql;
  orderBy?: string;
  limit?: number;
  /** Skip rows another transaction holds (PostgreSQL, MySQL 8, MariaDB 10.6); SQLite has one writer. */
  skipLocked?: boolean;
}

/**
 * UPDATE of the task rows matching `where`, returning them as written. The selected rows are
 * row-locked first (`FOR UPDATE [SKIP LOCKED]`) on PostgreSQL and MySQL; SQLite runs inside
 * `BEGIN IMMEDIATE`, so nobody else writes meanwhile.
 * PostgreSQL / SQLite: one statement (`UPDATE ... WHERE key IN (SELECT ... FOR UPDATE) RETURNING`, key: sql/row-key.ts);
 * MySQL: locking SELECT, UPDATE by primary key, SELECT of the result.
 */
export async function updateReturning(x: Exec, c: StoreContext, u: UpdateReturning): Promise<Row[]> {
  const where = sql`queue = ${c.queue} AND ${u.where}`;
  const order = u.orderBy ? raw(` ORDER BY ${u.orderBy}`) : raw('');
  const limit = u.limit !== undefined ? raw(` LIMIT ${Math.max(0, Math.floor(u.limit))}`) : raw('');
  const lock = c.d.rowLocks ? raw(u.skipLocked ? ' FOR UPDATE SKIP LOCKED' : ' FOR UPDATE') : raw('');
  const T = raw(c.t.tasks);
  if (c.d.returning) {
    const key = keyColumn(c);
    const pick = sql`SELECT ${key} FROM ${T} WHERE ${where}${order}${limit}${lock}`;
    return q(x, sql`UPDATE ${T} SET ${u.set} WHERE ${key} IN (${pick}) RETURNING ${raw(TASK_COLUMNS)}`);
  }
  const seqs = (await q<{ seq: unknown }>(x, sql`SELECT seq FROM ${T} WHERE ${where}${order}${limit}${lock}`)).map((r) => r.seq);
  if (seqs.length === 0) return [];
  await run(x, sql`UPDATE ${T} SET ${u.set} WHERE seq IN (${list(seqs)})`);
  return q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE seq IN (${list(seqs)})`);
}
