import type { StoreContext } from '../context';
import type { Row } from '../db';
import { raw } from './sql';

/**
 * The column a statement finds a task row by once the store has read that row (cancel,
 * changePriority, recovery, purge): PostgreSQL `id` (the primary key; seq has no index there:
 * schema/postgres/1-tables.sql); MySQL / MariaDB and SQLite
 * `seq` (the clustered primary key / the rowid).
 */
export function keyColumn(c: StoreContext) {
  return raw(c.d.kind === 'postgres' ? 'id' : 'seq');
}

export function keyOf(c: StoreContext, r: Row): unknown {
  return c.d.kind === 'postgres' ? r.id : r.seq;
}
