import type { Db } from '../db';
import type { TableNames } from '../names';
import { applyStep, SCHEMA_STEPS } from './migrations';

/**
 * init(): applies the schema steps not yet recorded in `<prefix>schema_version`, each in a
 * transaction holding the schema lock (PostgreSQL advisory lock / MySQL GET_LOCK / SQLite
 * BEGIN IMMEDIATE), so processes starting together do not race. MySQL commits DDL implicitly;
 * every statement is IF NOT EXISTS, so a step cut in the middle is simply run again.
 */
export async function migrate(schemaDb: Db, t: TableNames): Promise<void> {
  for (const step of SCHEMA_STEPS) {
    await schemaDb.tx((_x, qr) => applyStep(qr, step, t), { queueLock: true });
  }
}
