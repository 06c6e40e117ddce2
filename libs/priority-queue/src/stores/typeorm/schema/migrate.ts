import type { Db } from '../db';
import type { TableNames } from '../names';
import { num } from '../rows';
import { applyMigration, LATEST_SCHEMA_VERSION, SCHEMA_MIGRATIONS } from './migrations';

/**
 * init(): applies the migrations not yet recorded in `<prefix>schema_version`, each in a
 * transaction holding the schema lock (PostgreSQL advisory lock / MySQL GET_LOCK / SQLite
 * BEGIN IMMEDIATE), so processes starting together do not race: the first applies, the others
 * wait for the lock and find the version recorded. MySQL commits DDL implicitly; every statement
 * is idempotent, so a migration cut in the middle is simply run again.
 * A schema already current is only read (no DDL, no lock): an application role with no right
 * to create objects may start with migrate: true once the schema is there (docs/TYPEORM.md).
 */
export async function migrate(schemaDb: Db, t: TableNames): Promise<void> {
  if ((await recordedSchemaVersion(schemaDb, t)) >= LATEST_SCHEMA_VERSION) return;
  for (const m of SCHEMA_MIGRATIONS) {
    await schemaDb.tx((_x, qr) => applyMigration(qr, m, t), { queueLock: true });
  }
}

/** The newest version recorded in `<prefix>schema_version`; 0 when that table is missing. */
export function recordedSchemaVersion(db: Db, t: TableNames): Promise<number> {
  return db.autocommit(async (qr) => {
    if (!(await qr.hasTable(t.schemaVersion))) return 0;
    const [r] = (await qr.query(`SELECT max(version) AS v FROM ${t.schemaVersion}`)) as Array<{ v: unknown }>;
    return num(r?.v ?? 0);
  });
}
