import type { QueryRunner } from 'typeorm';
import type { Row } from './db';

/** One statement of a batch: SQL with `?` placeholders and its values. */
export interface BatchPart {
  sql: string;
  params?: readonly unknown[];
}

/** MariaDB's answer to SQL it cannot parse (a server without compound statements: MySQL). */
export const ER_PARSE_ERROR = 1064;

/**
 * MariaDB: several statements in ONE round trip, as an anonymous compound statement
 * (`BEGIN NOT ATOMIC s1; s2; ... END`, MariaDB 10.1+). The server runs them in order, each as
 * its own statement (its own NOW(), its own READ COMMITTED snapshot, its own locks), exactly as
 * if they were sent one by one; transaction statements (SET TRANSACTION, START TRANSACTION,
 * COMMIT) act on the session's transaction, which stays open after the block when the block
 * does not end it. The first statement that fails ends the block with its error (the ones
 * before it took effect: the caller rolls back). mysql2 sends the block as one text query with
 * its values escaped client-side, like every other query of the store, whatever the
 * application's `multipleStatements` setting; each statement that returns rows (a SELECT, an
 * INSERT ... RETURNING) comes back as one result set, in order.
 * Returns those result sets.
 */
export async function runBatch(qr: QueryRunner, parts: readonly BatchPart[]): Promise<Row[][]> {
  const text = `BEGIN NOT ATOMIC\n${parts.map((p) => p.sql).join(';\n')};\nEND`;
  const params = parts.flatMap((p) => p.params ?? []);
  const r = (await qr.query(text, params, true)) as { raw?: unknown };
  return resultSets(r.raw);
}

/** The result sets of a compound statement's answer (mysql2: an array of result sets and OK packets, or an OK packet alone). */
function resultSets(raw: unknown): Row[][] {
  if (!Array.isArray(raw)) return [];
  if (raw.length > 0 && raw.every((e) => Array.isArray(e) || isOk(e))) return raw.filter((e): e is Row[] => Array.isArray(e));
  return [raw as Row[]];
}

function isOk(e: unknown): boolean {
  return typeof e === 'object' && e !== null && !Array.isArray(e) && 'affectedRows' in e && 'fieldCount' in e;
}

/** The error number of a driver error as TypeORM wraps it. */
export function errnoOf(e: unknown): number {
  const o = e as { errno?: unknown; driverError?: { errno?: unknown } };
  return Number(o?.errno ?? o?.driverError?.errno);
}
