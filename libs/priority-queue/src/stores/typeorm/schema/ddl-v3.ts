import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';
import { claimFunctionV3 } from './pg-claim-v3';
import { completeLeasedFunction, PG_COMPLETE_LEASED_SIGNATURE, pgCompleteLeasedFunctionName } from './pg-complete-v3';
import { pgClaimFunctionName, pgFunctionsV2 } from './pg-functions';

const CLAIM_SIGNATURE = '(varchar, bigint, integer, bigint, varchar, varchar, integer, integer)';

/**
 * Version 3 of the schema (PostgreSQL speed; MySQL / MariaDB and SQLite: nothing to do, the
 * version is only recorded):
 * - `<prefix>lane_marks`: lanes that got tasks created due (see schema/pg-claim-v3.ts);
 * - `<prefix>claim` replaced by its v3 body (same arguments; its result has the claimed rows'
 *   ctid as a third column);
 * - `<prefix>complete_leased`: completes by ctid (schema/pg-complete-v3.ts).
 * Tasks staged by an older version keep being merged the v2 way, so a live queue migrates
 * in place.
 */
export function ddlV3(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'postgres') return [];
  return [
    `CREATE TABLE IF NOT EXISTS ${t.laneMarks} (id bigserial PRIMARY KEY, queue varchar(64) NOT NULL, lane_key varchar(64) NOT NULL,
      provider_key varchar(255) NOT NULL, account_id varchar(255) NULL, tenant_id varchar(255) NULL, concurrency_key varchar(255) NULL,
      k1 bigint NOT NULL, k2 bigint NOT NULL, run_at bigint NOT NULL, created_at bigint NOT NULL, seq bigint NOT NULL, priority integer NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${t.laneMarks}_queue ON ${t.laneMarks} (queue, id)`,
    `DROP FUNCTION IF EXISTS ${pgClaimFunctionName(t)}${CLAIM_SIGNATURE}`,
    claimFunctionV3(t),
    completeLeasedFunction(t),
  ];
}

/** Back to version 2: its claim function (which merges staged tasks only), marks dropped. */
export function undoV3(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'postgres') return [];
  // tasks created due under v3 sit in their lanes without a head: v2 would not see them
  // until a lane head is recomputed, so they go back to staged first
  return [
    `UPDATE ${t.tasks} SET staged = 1 WHERE status = 'PENDING_SUBMIT' AND staged = 0`,
    `UPDATE ${t.lanes} SET h1 = NULL, h2 = NULL, h_run_at = NULL, h_created_at = NULL, h_seq = NULL, h_priority = NULL, ready = 0`,
    `DROP FUNCTION IF EXISTS ${pgCompleteLeasedFunctionName(t)}${PG_COMPLETE_LEASED_SIGNATURE}`,
    `DROP FUNCTION IF EXISTS ${pgClaimFunctionName(t)}${CLAIM_SIGNATURE}`,
    ...pgFunctionsV2(t).filter((s) => s.includes(`FUNCTION ${t.prefix}claim(`)),
    `DROP TABLE IF EXISTS ${t.laneMarks}`,
  ];
}
