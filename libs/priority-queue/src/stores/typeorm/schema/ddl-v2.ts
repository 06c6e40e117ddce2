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
      return [];
    case 'sqlite':
      return [];
  }
}

export function undoV2(kind: DialectKind, t: TableNames): string[] {
  switch (kind) {
    case 'postgres':
      return pgFunctionsUndo(t);
    case 'mysql':
      return [];
    case 'sqlite':
      return [];
  }
}
