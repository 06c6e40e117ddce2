-- {{prefix}}claim_polls(queue, now, limit, leaseMs, owner, batch): claimPolls in one round trip.
-- Cancel requests of SUBMITTED / RUNNING tasks first, then due polls, each in next_poll_at
-- order, leased to the caller (lease id = batch:id, version + 1).
--
-- Mirrors the generic path of sql/claim-polls.ts (MySQL / MariaDB and SQLite).
--
-- Locks: no queue lock; the rows are locked FOR UPDATE SKIP LOCKED, so concurrent pollers take
-- disjoint rows and never wait for each other. Reads the partial indexes tasks_cancel and
-- tasks_poll.
CREATE OR REPLACE FUNCTION {{prefix}}claim_polls(
  p_queue varchar, p_now bigint, p_limit integer, p_lease_ms bigint, p_owner varchar, p_batch varchar)
RETURNS SETOF {{prefix}}tasks
LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, (floor(extract(epoch from statement_timestamp()) * 1000))::bigint);
  v_n integer;
BEGIN
  -- each UPDATE behind a probe of its index: an UPDATE that finds nothing still opens every
  -- index of tasks at its start, and an idle worker polls
  v_n := 0;
  IF EXISTS (SELECT 1 FROM {{prefix}}tasks WHERE queue = p_queue AND cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING')) THEN
    RETURN QUERY WITH u AS (UPDATE {{prefix}}tasks SET lease_owner = p_owner, lease_id = p_batch || ':' || id, lease_until = v_now + p_lease_ms, version = version + 1, updated_at = v_now
      WHERE id IN (SELECT id FROM {{prefix}}tasks WHERE queue = p_queue AND cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING') AND (lease_until IS NULL OR lease_until <= v_now)
        ORDER BY next_poll_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
      RETURNING *) SELECT * FROM u;
    GET DIAGNOSTICS v_n = ROW_COUNT;
  END IF;
  IF v_n < p_limit AND EXISTS (SELECT 1 FROM {{prefix}}tasks WHERE queue = p_queue AND status IN ('SUBMITTED', 'RUNNING') AND next_poll_at <= v_now) THEN
    RETURN QUERY WITH u AS (UPDATE {{prefix}}tasks SET lease_owner = p_owner, lease_id = p_batch || ':' || id, lease_until = v_now + p_lease_ms, version = version + 1, updated_at = v_now
      WHERE id IN (SELECT id FROM {{prefix}}tasks WHERE queue = p_queue AND status IN ('SUBMITTED', 'RUNNING') AND next_poll_at <= v_now
        AND (lease_until IS NULL OR lease_until <= v_now) AND cancel_requested = 0 ORDER BY next_poll_at LIMIT p_limit - v_n FOR UPDATE SKIP LOCKED)
      RETURNING *) SELECT * FROM u;
  END IF;
END
$fn$;
