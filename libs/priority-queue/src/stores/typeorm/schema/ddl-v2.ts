import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';
import { pgFunctionsUndo, pgFunctionsV2 } from './pg-functions';

/**
 * Version 2 of the schema (speed; no table changes a v1 store depends on):
 * - PostgreSQL: the server-side functions of pg-functions.ts (the claim in one round trip);
 * - MySQL / MariaDB and SQLite: see the comments per statement.
 * `CREATE OR REPLACE` / `IF NOT EXISTS`: idempotent, like version 1.
 */
export function ddlV2(kind: DialectKind, t: TableNames): string[] {
  switch (kind) {
    case 'postgres':
      return pgFunctionsV2(t);
    case 'mysql':
      // stage marks (sql/stage-marks.ts): a claim reads the staged range only when one is due;
      // tasks staged before this version get one mark per queue
      return [
        `CREATE TABLE IF NOT EXISTS ${t.stageMarks} (
          id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, queue VARCHAR(64) NOT NULL, run_at BIGINT NOT NULL,
          KEY ${t.stageMarks}_due (queue, run_at)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
        `INSERT INTO ${t.stageMarks} (queue, run_at)
          SELECT queue, MIN(run_at) FROM ${t.tasks} WHERE status = 'PENDING_SUBMIT' AND staged = 1 GROUP BY queue`,
      ];
    case 'sqlite':
      // SQLite uses a partial index only when its WHERE terms appear as such in the query: the
      // claim's timeout lookup (status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL) could
      // not use v1's deadline index (status IN (...)) and walked every pending task
      return [
        `CREATE INDEX IF NOT EXISTS ${t.tasks}_due_deadline ON ${t.tasks} (queue, deadline_at)
          WHERE status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL`,
      ];
  }
}

export function undoV2(kind: DialectKind, t: TableNames): string[] {
  switch (kind) {
    case 'postgres':
      return pgFunctionsUndo(t);
    case 'mysql':
      return [`DROP TABLE IF EXISTS ${t.stageMarks}`];
    case 'sqlite':
      return [`DROP INDEX IF EXISTS ${t.tasks}_due_deadline`];
  }
}
