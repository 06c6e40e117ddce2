import type { TableNames } from '../names';
import { PG_TASK_RESULT } from './pg-functions';

export function pgCompleteLeasedFunctionName(t: TableNames): string {
  return `${t.prefix}complete_leased`;
}

export const PG_COMPLETE_LEASED_SIGNATURE =
  '(varchar, bigint[], varchar[], tid[], varchar[], integer[], varchar[], text[], text[], integer[])';

/**
 * `<prefix>complete_leased(...)` (schema v3, PostgreSQL): a batch of complete() calls in one
 * round trip, like v2's `<prefix>complete`, in two kinds:
 * - a call whose task this store claimed (pg-lease-cache.ts) carries the row's ctid: the row
 *   is found by a TID scan (the fence, id and queue re-checked on it) and only
 *   (kind 1, id, finished_at) comes back, the client has the rest;
 * - any other call (tid NULL): the row by the id index, returned whole (kind 2).
 * The two UPDATEs work on disjoint calls, so no row is written twice. A call absent from the
 * result matched nothing: a kind-1 call whose row moved (a newer version) is sent again
 * without its ctid by the client, a kind-2 call was refused (stale fence, wrong status).
 * Every call writes its terminal status, result, error and finished_at, adds its p_attempts
 * value (1 for a failed submit attempt, else 0) to attempts, and clears the lease and
 * next_poll_at.
 * Locks: the rows written; `releases` rows appended for tasks holding slots, as in v2.
 * (Unreleased library: the body and arguments of this step were changed in place for the
 * attempts count and next_poll_at; the schema steps are squashed before the first release.)
 */
export function completeLeasedFunction(t: TableNames): string {
  const { tasks: T, releases: R } = t;
  const out = PG_TASK_RESULT.map(([c, ty]) => `o_${c} ${ty}`).join(', ');
  const full = PG_TASK_RESULT.map(([c]) => `u.${c}`).join(', ');
  const short = PG_TASK_RESULT.map(([c, ty]) => (c === 'id' ? 'u.id' : c === 'finished_at' ? 'u.finished_at' : `NULL::${ty}`)).join(', ');
  const set = `status = i.status, result = i.result, error = i.error, finished_at = coalesce(i.now, v_now),
      attempts = x.attempts + i.attempt, lease_owner = NULL, lease_id = NULL, lease_until = NULL, next_poll_at = NULL,
      version = x.version + 1, updated_at = coalesce(i.now, v_now)`;
  const fence = `x.lease_id = i.lease_id AND x.version = i.version AND x.status IN ('SUBMITTING', 'SUBMITTED', 'RUNNING')`;
  const slots = 'account_id IS NOT NULL OR tenant_id IS NOT NULL OR concurrency_key IS NOT NULL';
  return `CREATE OR REPLACE FUNCTION ${pgCompleteLeasedFunctionName(t)}(
  p_queue varchar, p_nows bigint[], p_ids varchar[], p_tids tid[], p_leases varchar[], p_versions integer[], p_statuses varchar[],
  p_results text[], p_errors text[], p_attempts integer[])
RETURNS TABLE (o_kind smallint, ${out})
LANGUAGE plpgsql
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $fn$
DECLARE
  v_now bigint := (floor(extract(epoch from statement_timestamp()) * 1000))::bigint;
BEGIN
  RETURN QUERY
  WITH i AS (SELECT * FROM unnest(p_ids, p_tids, p_leases, p_versions, p_statuses, p_results, p_errors, p_nows, p_attempts)
      AS i(id, tid, lease_id, version, status, result, error, now, attempt)),
  u1 AS (UPDATE ${T} x SET ${set}
    FROM i WHERE i.tid IS NOT NULL AND x.ctid = i.tid AND x.id = i.id AND x.queue = p_queue AND ${fence}
    RETURNING x.id, x.finished_at, x.lane_key, x.account_id, x.tenant_id, x.concurrency_key),
  u2 AS (UPDATE ${T} x SET ${set}
    FROM i WHERE i.tid IS NULL AND x.id = i.id AND x.queue || '' = p_queue AND ${fence}
    RETURNING x.*),
  r AS (INSERT INTO ${R} (queue, lane_key)
    SELECT p_queue, lane_key FROM u1 WHERE ${slots} UNION ALL SELECT p_queue, lane_key FROM u2 WHERE ${slots})
  SELECT 1::smallint, ${short} FROM u1 u
  UNION ALL
  SELECT 2::smallint, ${full} FROM u2 u;
END
$fn$`;
}
