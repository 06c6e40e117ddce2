import { FairTagOverflowError } from '../../../core/errors';
import type { TableNames } from '../names';

/**
 * Names and result columns of the PostgreSQL functions of schema/postgres/1-*.sql, for the
 * queries that call them (claim-submissions.pg.ts, sql/complete-batch.ts, sql/claim-polls.ts).
 */

/**
 * Task columns the claim and complete_leased functions return after their own leading columns,
 * with their PostgreSQL types, in the order of rows.ts TASK_COLUMNS (the functions' RETURNS
 * TABLE lists them as o_<name>; test/typeorm/schema.spec.ts checks both agree).
 */
export const PG_TASK_RESULT: ReadonlyArray<readonly [string, string]> = [
  ['seq', 'bigint'], ['id', 'varchar'], ['idempotency_key', 'varchar'], ['type', 'varchar'], ['payload', 'text'],
  ['priority', 'integer'], ['run_at', 'bigint'], ['deadline_at', 'bigint'], ['created_at', 'bigint'], ['status', 'varchar'],
  ['staged', 'smallint'], ['lane_key', 'varchar'], ['provider_key', 'varchar'], ['account_id', 'varchar'],
  ['tenant_id', 'varchar'], ['concurrency_key', 'varchar'], ['version', 'integer'], ['attempts', 'integer'],
  ['max_attempts', 'integer'], ['idempotent', 'smallint'], ['lease_owner', 'varchar'], ['lease_id', 'varchar'],
  ['lease_until', 'bigint'], ['result', 'text'], ['error', 'text'], ['external_id', 'varchar'], ['next_poll_at', 'bigint'],
  ['poll_errors', 'integer'], ['cancel_requested', 'smallint'], ['updated_at', 'bigint'], ['finished_at', 'bigint'],
  ['k2', 'bigint'], ['boost_at', 'bigint'], ['boost_priority', 'integer'],
];

/**
 * `build(t)` once per store's TableNames: the statement text of a hot call, built (and hashed by
 * PgDirect's statement-name map) once instead of on every call.
 */
export function perTables(build: (t: TableNames) => string): (t: TableNames) => string {
  const memo = new WeakMap<TableNames, string>();
  return (t) => {
    let s = memo.get(t);
    if (s === undefined) {
      s = build(t);
      memo.set(t, s);
    }
    return s;
  };
}

/** schema/postgres/1-claim.sql */
export function pgClaimFunctionName(t: TableNames): string {
  return `${t.prefix}claim`;
}

/** schema/postgres/1-complete-leased.sql */
export function pgCompleteLeasedFunctionName(t: TableNames): string {
  return `${t.prefix}complete_leased`;
}

/** schema/postgres/1-claim-polls.sql */
export function pgClaimPollsFunctionName(t: TableNames): string {
  return `${t.prefix}claim_polls`;
}

/** schema/postgres/1-fair-tags.sql: the fair tags of tasks created or moved to another level, in order. */
export function pgFairTagFunctionName(t: TableNames): string {
  return `${t.prefix}fair_tag`;
}

/** SQLSTATE of 1-fair-tags.sql next_finish_tag(): a fair tag would pass MAX_FAIR_TAG. */
export const PG_FAIR_TAG_OVERFLOW = 'PQF01';

/** Rethrows an error of a statement that may tag (create, claim): PG_FAIR_TAG_OVERFLOW as FairTagOverflowError. */
export function pgStoreError(e: unknown): never {
  if ((e as { code?: unknown } | null)?.code === PG_FAIR_TAG_OVERFLOW) throw new FairTagOverflowError();
  throw e;
}

/** schema/postgres/1-complete-and-claim.sql */
export function pgCompleteAndClaimFunctionName(t: TableNames): string {
  return `${t.prefix}complete_and_claim`;
}
