import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';

/** Statuses the v4 status index leaves out: every task is in one of them right after its create and its claim. */
export const PG_STATUS_UNINDEXED = ['PENDING_SUBMIT', 'SUBMITTING'] as const;

const UNINDEXED = PG_STATUS_UNINDEXED.map((s) => `'${s}'`).join(', ');

/**
 * Version 4 of the schema (PostgreSQL speed; MySQL / MariaDB and SQLite: only recorded).
 *
 * A task's create and its claim are non-HOT writes (status changes, and status is in the
 * predicates of the hot partial indexes), so each of them adds an entry to EVERY index whose
 * predicate the new row version satisfies. v2's status index `((queue || chr(31) || status), seq)`
 * (only list() and stats() read it) had no predicate: one entry per row version, three per task
 * of the twelve a drain wrote. v4 keeps it only for the statuses after SUBMITTING; list() and
 * stats() find the two others through indexes those row versions are in anyway
 * (sql/by-status.ts):
 * - PENDING_SUBMIT: the lane index (`staged = 0`) and the staged index (`staged = 1`);
 * - SUBMITTING: the lease index (`lease_until IS NOT NULL`, what every claim writes) and
 *   `<prefix>tasks_submitting_nolease` below (SUBMITTING without a lease: no writer makes one,
 *   so it stays empty and costs nothing; it is there so a list stays an index read whatever
 *   the data).
 * A drain now writes 10 index entries per task instead of 12.
 */
export function ddlV4(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'postgres') return [];
  return [
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_status_rest ON ${t.tasks} ((queue || chr(31) || status), seq) WHERE status NOT IN (${UNINDEXED})`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_submitting_nolease ON ${t.tasks} (queue, seq) WHERE status = 'SUBMITTING' AND lease_until IS NULL`,
    `DROP INDEX IF EXISTS ${t.tasks}_status`,
  ];
}

/** Back to version 3: the status index over every row. */
export function undoV4(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'postgres') return [];
  return [
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_status ON ${t.tasks} ((queue || chr(31) || status), seq)`,
    `DROP INDEX IF EXISTS ${t.tasks}_status_rest`,
    `DROP INDEX IF EXISTS ${t.tasks}_submitting_nolease`,
  ];
}
