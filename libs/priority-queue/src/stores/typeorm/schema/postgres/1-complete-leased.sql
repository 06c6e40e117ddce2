-- {{prefix}}complete_leased(queue, nows, ids, tids, leases, versions, statuses, results, errors,
-- attempts): a batch of complete() calls in one round trip (sql/complete-batch.ts gathers the
-- calls of one event-loop turn), in two kinds:
-- - a call whose task this store claimed (its LeaseCache, stores/shared/lease-cache.ts) carries the row's ctid: the row is
--   found by a TID scan (fence, id and queue re-checked on it) and only (kind 1, id,
--   finished_at) comes back, the client has the rest;
-- - any other call (tid NULL), and a call whose ctid found no row (the row moved: any update
--   since the claim, e.g. a lease renewal, writes a new tuple): the row by the primary key,
--   returned whole (kind 2). So every call is written in this call, before the claim of
--   complete_and_claim, which must see the slots the completes free.
-- The two UPDATEs work on disjoint calls (the second skips the ids the first wrote), so no row
-- is written twice; the second runs only when a call is left (a call by id is rare: every
-- statement that writes tasks starts up by opening all of its indexes, and the releases'),
-- and releases are appended only for rows that hold slots. A call absent from the result was
-- refused (stale fence, wrong status). Every call
-- writes its terminal status, result, error and finished_at, adds its attempts value (1 for a
-- failed submit attempt, else 0) to attempts, and clears the lease and next_poll_at.
--
-- Mirrors completeOne (sql/complete-batch.ts), the fenced write of the other dialects
-- (core: fenceOf, the lease fence of DESIGN §4).
--
-- Locks: the task rows written (row locks of the UPDATEs, no queue lock: a finishing task never
-- waits for a claim); a releases row is appended for each task that holds slots, applied by the
-- next claim under the queue lock. Hash and merge joins off: a nested loop over the calls, each
-- row by its ctid or the primary key.
--
-- Plans: force_generic_plan, as the claim (1-claim.sql): the access paths are fixed (TID scan,
-- primary key), and PL/pgSQL's default planned the UPDATE again on every call (a custom plan
-- looked cheaper than the generic one, which cannot know the batch's size): about 7 shared
-- blocks and a planning of the statement per call. A generic plan is made once per connection,
-- maybe on a table of a few rows (on 50 rows the generic plan of the UPDATE by ctid was a
-- sequential scan, then a full scan of the primary key, joined to the calls): sequential scans
-- off and the id compared as an expression (no index order to merge on), so that the TID scan
-- is its only access path. The UPDATE by id runs through EXECUTE (planned with its values).
CREATE OR REPLACE FUNCTION {{prefix}}complete_leased(
  p_queue varchar, p_nows bigint[], p_ids varchar[], p_tids tid[], p_leases varchar[], p_versions integer[], p_statuses varchar[],
  p_results text[], p_errors text[], p_attempts integer[])
RETURNS TABLE (
  o_kind smallint, o_seq bigint, o_id varchar, o_idempotency_key varchar, o_type varchar,
  o_payload text, o_priority integer, o_run_at bigint, o_deadline_at bigint, o_created_at bigint,
  o_status varchar, o_staged smallint, o_lane_key varchar, o_provider_key varchar,
  o_account_id varchar, o_tenant_id varchar, o_concurrency_key varchar, o_version integer,
  o_attempts integer, o_max_attempts integer, o_idempotent smallint, o_lease_owner varchar,
  o_lease_id varchar, o_lease_until bigint, o_result text, o_error text, o_external_id varchar,
  o_next_poll_at bigint, o_poll_errors integer, o_cancel_requested smallint, o_updated_at bigint,
  o_finished_at bigint, o_k2 bigint, o_boost_at bigint, o_boost_priority integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $fn$
DECLARE
  v_now bigint := (floor(extract(epoch from statement_timestamp()) * 1000))::bigint;
  v_ids varchar[];
  v_at bigint[];
  v_lanes varchar[];
BEGIN
  -- the calls with a ctid: the rows by TID scan; what the caller needs (id, finished_at) and
  -- the lanes of the rows that held slots into arrays (no row of the table read again)
  IF cardinality(array_remove(p_tids, NULL)) > 0 THEN
    WITH i AS (SELECT * FROM unnest(p_ids, p_tids, p_leases, p_versions, p_statuses, p_results, p_errors, p_nows, p_attempts)
        AS i(id, tid, lease_id, version, status, result, error, now, attempt)),
    u AS (UPDATE {{prefix}}tasks x SET status = i.status, result = i.result, error = i.error, finished_at = coalesce(i.now, v_now),
        attempts = x.attempts + i.attempt, lease_owner = NULL, lease_id = NULL, lease_until = NULL, next_poll_at = NULL,
        version = x.version + 1, updated_at = coalesce(i.now, v_now)
      FROM i WHERE i.tid IS NOT NULL AND x.ctid = i.tid AND x.id || '' = i.id AND x.queue = p_queue AND x.lease_id = i.lease_id AND x.version = i.version AND x.status IN ('SUBMITTING', 'SUBMITTED', 'RUNNING')
      RETURNING x.id, x.finished_at, x.lane_key, x.account_id IS NOT NULL OR x.tenant_id IS NOT NULL OR x.concurrency_key IS NOT NULL AS slots)
    SELECT array_agg(u.id), array_agg(u.finished_at), array_agg(u.lane_key) FILTER (WHERE u.slots) INTO v_ids, v_at, v_lanes FROM u;
  END IF;
  -- the other calls (no ctid, or a ctid that found no row: it moved) by the primary key,
  -- returned whole, their releases appended in the same statement
  IF coalesce(cardinality(v_ids), 0) < cardinality(p_ids) THEN
    -- planned on each call with its values (EXECUTE: a custom plan, by the primary key), as this
    -- rare path was before the function's plans became generic (see Plans above)
    RETURN QUERY EXECUTE $q$
    WITH i AS (SELECT * FROM unnest($3, $4, $5, $6, $7, $8, $9, $10, $11)
        AS i(id, tid, lease_id, version, status, result, error, now, attempt)),
    u AS (UPDATE {{prefix}}tasks x SET status = i.status, result = i.result, error = i.error, finished_at = coalesce(i.now, $2),
        attempts = x.attempts + i.attempt, lease_owner = NULL, lease_id = NULL, lease_until = NULL, next_poll_at = NULL,
        version = x.version + 1, updated_at = coalesce(i.now, $2)
      FROM i WHERE NOT (i.id = ANY ($12)) AND x.id = i.id AND x.queue || '' = $1 AND x.lease_id = i.lease_id AND x.version = i.version AND x.status IN ('SUBMITTING', 'SUBMITTED', 'RUNNING')
      RETURNING x.*),
    r AS (INSERT INTO {{prefix}}releases (queue, lane_key)
      SELECT $1, lane_key FROM u WHERE account_id IS NOT NULL OR tenant_id IS NOT NULL OR concurrency_key IS NOT NULL)
    SELECT 2::smallint, u.seq, u.id, u.idempotency_key, u.type, u.payload, u.priority, u.run_at, u.deadline_at, u.created_at, u.status, u.staged, u.lane_key, u.provider_key, u.account_id, u.tenant_id, u.concurrency_key, u.version, u.attempts, u.max_attempts, u.idempotent, u.lease_owner, u.lease_id, u.lease_until, u.result, u.error, u.external_id, u.next_poll_at, u.poll_errors, u.cancel_requested, u.updated_at, u.finished_at, u.k2, u.boost_at, u.boost_priority FROM u
    $q$ USING p_queue, v_now, p_ids, p_tids, p_leases, p_versions, p_statuses, p_results, p_errors, p_nows, p_attempts, coalesce(v_ids, '{}');
  END IF;
  IF v_lanes IS NOT NULL THEN
    INSERT INTO {{prefix}}releases (queue, lane_key) SELECT p_queue, unnest(v_lanes);
  END IF;
  RETURN QUERY SELECT 1::smallint, NULL::bigint, u.id, NULL::varchar, NULL::varchar, NULL::text, NULL::integer, NULL::bigint, NULL::bigint, NULL::bigint, NULL::varchar, NULL::smallint, NULL::varchar, NULL::varchar, NULL::varchar, NULL::varchar, NULL::varchar, NULL::integer, NULL::integer, NULL::integer, NULL::smallint, NULL::varchar, NULL::varchar, NULL::bigint, NULL::text, NULL::text, NULL::varchar, NULL::bigint, NULL::integer, NULL::smallint, NULL::bigint, u.finished_at, NULL::bigint, NULL::bigint, NULL::integer
    FROM unnest(v_ids, v_at) AS u(id, finished_at);
END
$fn$;
