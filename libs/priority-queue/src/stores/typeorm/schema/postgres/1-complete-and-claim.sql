-- {{prefix}}complete_and_claim(queue, the arguments of complete_leased after its queue, then those of
-- claim after its queue): TaskStore.completeAndClaim in ONE round trip (sql/complete-and-claim.pg.ts),
-- BullMQ's move-to-finished-and-fetch-next. It calls {{prefix}}complete_leased
-- (1-complete-leased.sql), then {{prefix}}claim (1-claim.sql), in the statement's one transaction:
-- the claim applies the releases rows the completes appended, so it sees the slots they freed, as
-- two calls made one after the other would. Each row out says which part it comes from (o_part 1:
-- a complete_leased row, its o_kind and task columns; 2: a claim row, its o_kind, o_wake, o_ctid
-- and task columns); the columns the part does not have are NULL.
--
-- Mirrors nothing of its own: the two functions it calls (held to core and the reference model by
-- the contract and model-based tests, which also compare this call with the two calls apart).
--
-- Locks: those of complete_leased (the completed task rows), then those of claim (the queue's
-- advisory lock, pg_advisory_xact_lock), all held until the statement's COMMIT: the completed rows
-- stay locked while the claim waits for the queue lock. Nothing that holds the queue lock waits
-- for a row in flight under a live lease (claims write pending rows; the recovery sweep takes
-- expired or past-deadline ones), and a deadlock PostgreSQL reports all the same is retried by
-- the caller (retryOnConflict).
CREATE OR REPLACE FUNCTION {{prefix}}complete_and_claim(
  p_queue varchar, p_nows bigint[], p_ids varchar[], p_tids tid[], p_leases varchar[], p_versions integer[], p_statuses varchar[],
  p_results text[], p_errors text[], p_attempts integer[],
  p_now bigint, p_limit integer, p_lease_ms bigint, p_owner varchar, p_batch varchar, p_lock1 integer, p_lock2 integer,
  p_aging bigint, p_fair boolean)
RETURNS TABLE (
  o_part smallint, o_kind smallint, o_wake bigint, o_ctid tid, o_seq bigint, o_id varchar,
  o_idempotency_key varchar, o_type varchar, o_payload text, o_priority integer, o_run_at bigint,
  o_deadline_at bigint, o_created_at bigint, o_status varchar, o_staged smallint,
  o_lane_key varchar, o_provider_key varchar, o_account_id varchar, o_tenant_id varchar,
  o_concurrency_key varchar, o_version integer, o_attempts integer, o_max_attempts integer,
  o_idempotent smallint, o_lease_owner varchar, o_lease_id varchar, o_lease_until bigint,
  o_result text, o_error text, o_external_id varchar, o_next_poll_at bigint, o_poll_errors integer,
  o_cancel_requested smallint, o_updated_at bigint, o_finished_at bigint, o_k2 bigint, o_boost_at bigint,
  o_boost_priority integer)
LANGUAGE plpgsql
AS $fn$
BEGIN
  IF cardinality(p_ids) > 0 THEN
    RETURN QUERY SELECT 1::smallint, c.o_kind, NULL::bigint, NULL::tid,
      c.o_seq, c.o_id, c.o_idempotency_key, c.o_type, c.o_payload, c.o_priority, c.o_run_at,
      c.o_deadline_at, c.o_created_at, c.o_status, c.o_staged, c.o_lane_key, c.o_provider_key,
      c.o_account_id, c.o_tenant_id, c.o_concurrency_key, c.o_version, c.o_attempts, c.o_max_attempts,
      c.o_idempotent, c.o_lease_owner, c.o_lease_id, c.o_lease_until, c.o_result, c.o_error,
      c.o_external_id, c.o_next_poll_at, c.o_poll_errors, c.o_cancel_requested, c.o_updated_at,
      c.o_finished_at, c.o_k2, c.o_boost_at, c.o_boost_priority
    FROM {{prefix}}complete_leased(p_queue, p_nows, p_ids, p_tids, p_leases, p_versions, p_statuses, p_results,
      p_errors, p_attempts) c;
  END IF;
  RETURN QUERY SELECT 2::smallint, k.o_kind, k.o_wake, k.o_ctid,
      k.o_seq, k.o_id, k.o_idempotency_key, k.o_type, k.o_payload, k.o_priority, k.o_run_at,
      k.o_deadline_at, k.o_created_at, k.o_status, k.o_staged, k.o_lane_key, k.o_provider_key,
      k.o_account_id, k.o_tenant_id, k.o_concurrency_key, k.o_version, k.o_attempts, k.o_max_attempts,
      k.o_idempotent, k.o_lease_owner, k.o_lease_id, k.o_lease_until, k.o_result, k.o_error,
      k.o_external_id, k.o_next_poll_at, k.o_poll_errors, k.o_cancel_requested, k.o_updated_at,
      k.o_finished_at, k.o_k2, k.o_boost_at, k.o_boost_priority
    FROM {{prefix}}claim(p_queue, p_now, p_limit, p_lease_ms, p_owner, p_batch, p_lock1, p_lock2, p_aging, p_fair) k;
END
$fn$;
