import type { Db } from '../db';
import type { TableNames } from '../names';
import { applyMigration, SCHEMA_MIGRATIONS } from './migrations';

/**
 * init(): applies the migrations not yet recorded in `<prefix>schema_version`, each in a
 * transaction holding the schema lock (PostgreSQL advisory lock / MySQL GET_LOCK / SQLite
 * BEGIN IMMEDIATE), so processes starting together do not race: the first applies, the others
 * wait for the lock and find the version recorded. MySQL commits DDL implicitly; every statement
 * is idempotent, so a migration cut in the middle is simply run again.
 */
export async function migrate(schemaDb: Db, t: TableNames): Promise<void> {
  for (const m of SCHEMA_MIGRATIONS) {
    await schemaDb.tx((_x, qr) => applyMigration(qr, m, t), { queueLock: true });
  }
}
