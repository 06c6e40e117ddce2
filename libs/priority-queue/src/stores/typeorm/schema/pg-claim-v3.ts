import type { TableNames } from '../names';
import { bestLaneAndNext, laneAdmission, nextWake, PG_TASK_RESULT, pgClaimFunctionName, releasesAndRate, upsertLaneHeads } from './pg-functions';

/**
 * `<prefix>claim(...)`, schema version 3 (PostgreSQL). Same contract as v2 (pg-functions.ts):
 * the whole claim in one autocommit statement under the queue's advisory lock, rows out as
 * (kind, wake, task columns). What changed, all to touch fewer rows and index pages per task:
 *
 * - Lane marks instead of staging for tasks created due: create (sql/insert-tasks.pg.ts) writes
 *   such tasks straight into their lane (`staged` = 0) and, in the same statement, one row per
 *   lane into `<prefix>lane_marks` with the key of its best new task. The claim merges the
 *   marks into the lane heads like staged tasks (a head only gets better), so a task is no
 *   longer updated once more just to be merged (v2 rewrote every new row: one dead tuple and
 *   four index entries per task). Delayed, retried and re-prioritised tasks are still staged
 *   and merged as in v2.
 * - Invariant the lane read relies on: every task of a lane in the lane index has a key >= the
 *   lane's stored head, except tasks whose create's mark is not applied yet (committed after
 *   this claim's step 4a: for this claim they do not exist yet). Heads only go down by
 *   merges (least), and a claim sets the head to the lane's first task after the ones it claimed.
 * - The lane's step reads its tasks from the lane's head up to the second-best lane's head (at
 *   most cap; both ends index conditions), claims them by ctid (a TID scan, no index probe, no
 *   separate FOR UPDATE pass), then finds the next head with one probe that starts after the
 *   last task read. v2 started both reads at the lane's first index entry, so they walked the
 *   entries of every task claimed since the last vacuum (dead, and the ones this claim just
 *   updated not even known dead yet). Claimed rows come back through the UPDATE's RETURNING (no
 *   read by seq after), with their ctid (`o_ctid`, see pg-lease-cache.ts and pg-complete-v3.ts).
 *
 * Plans: `force_generic_plan`. Every statement's access path is fixed by its index conditions
 * (partial indexes, row comparisons on the lane index, TID scans), so a generic plan is the
 * right one, and PL/pgSQL's default re-planned the larger statements on every call (their
 * custom plans looked cheaper): about 15% of a one-lane claim.
 *
 * Locks: the advisory lock (claims of one queue are serialised). Rows are not locked before the
 * UPDATE: only writers outside the queue lock can change a pending row (cancel, changePriority),
 * and they take it out of the lane; the UPDATE re-checks its ctid and `PENDING_SUBMIT / staged
 * = 0`, so a row changed in between is skipped (READ COMMITTED re-check), never claimed stale.
 *
 * A mark written by a create that commits while a claim runs is applied by the next claim;
 * tasks of that create may already be claimed from their lane meanwhile (they are visible to
 * the claim's later statements), which is the order of a claim that started after the create.
 */
/**
 * Columns of a claimed row the claim returns as NULL: status (SUBMITTING), lease owner, lease
 * id (batch:id), lease end (now + leaseMs) and updated_at (now) follow from the call and from
 * `o_wake`, which carries the claim's now on these rows; staged and lane_key are not task fields.
 */
export const CALLER_KNOWS = new Set(['status', 'staged', 'lane_key', 'lease_owner', 'lease_id', 'lease_until', 'updated_at']);

/**
 * `key`: the column the timeout and staged-merge UPDATEs find their rows by (a unique indexed
 * column): `seq` up to schema v4, `id` from v5 on (seq has no index then, see schema/ddl-v5.ts).
 */
export function claimFunctionV3(t: TableNames, key: 'seq' | 'id' = 'seq'): string {
  const { tasks: T, lanes: L, laneMarks: M } = t;
  const out = PG_TASK_RESULT.map(([c, ty]) => `o_${c} ${ty}`).join(', ');
  const cols = PG_TASK_RESULT.map(([c]) => `x.${c}`).join(', ');
  // a claimed row without the columns the caller knows (it fills them in, see
  // claim-submissions.pg.ts) or does not read: fewer bytes to format, send and parse
  const claimedCols = PG_TASK_RESULT.map(([c, ty]) => (CALLER_KNOWS.has(c) ? `NULL::${ty}` : `x.${c}`)).join(', ');
  const order = 'k1, k2, run_at, created_at, seq';
  const BIG = '9223372036854775807';
  const pending = `queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 0`;
  return `CREATE OR REPLACE FUNCTION ${pgClaimFunctionName(t)}(
  p_queue varchar, p_now bigint, p_limit integer, p_lease_ms bigint, p_owner varchar, p_batch varchar,
  p_lock1 integer, p_lock2 integer)
RETURNS TABLE (o_kind smallint, o_wake bigint, o_ctid tid, ${out})
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $fn$
DECLARE
  v_now bigint;
  v_n integer := 0;
  v_m integer;
  v_cap integer;
  v_park varchar;
  v_until bigint;
  v_room integer;
  v_lim integer;
  v_wake bigint;
  v_interval double precision;
  v_tat double precision;
  v_next double precision;
  v_burst integer;
  v_k integer;
  v_b bigint[];
  vl record;
  vb record;
  vp record;
  va record;
  v_s bigint[];
  v_keys bigint[];
  v_read integer;
  v_got tid[];
  v_claimed tid[] := '{}';
BEGIN
  PERFORM pg_advisory_xact_lock(p_lock1, p_lock2);
  v_now := coalesce(p_now, (floor(extract(epoch from clock_timestamp()) * 1000))::bigint);

  -- 1. due candidates past their deadline (partial index on deadline_at of live rows)
  RETURN QUERY WITH u AS (
    UPDATE ${T} x SET status = 'TIMED_OUT', staged = 0, version = x.version + 1, updated_at = v_now, finished_at = v_now,
      error = 'deadline passed before submit'
    WHERE x.${key} IN (SELECT ${key} FROM ${T} WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL
      AND deadline_at <= v_now AND run_at <= v_now FOR UPDATE)
    RETURNING ${cols})
  SELECT 2::smallint, NULL::bigint, NULL::tid, u.* FROM u;

${releasesAndRate(t)}
  -- 4a. lanes marked by creates: a lane's head becomes the best marked key when that is better
  IF EXISTS (SELECT 1 FROM ${M} WHERE queue = p_queue) THEN
    WITH d AS (DELETE FROM ${M} WHERE queue = p_queue
      RETURNING lane_key, provider_key, account_id, tenant_id, concurrency_key, k1, k2, run_at, created_at, seq, priority),
    mb AS (SELECT DISTINCT ON (lane_key) * FROM d ORDER BY lane_key, ${order})
${upsertLaneHeads(L)}
  END IF;

  -- 4b. merge due staged tasks: a lane's head changes only when the best merged task is better
  IF EXISTS (SELECT 1 FROM ${T} WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= v_now) THEN
    WITH m AS (UPDATE ${T} SET staged = 0
      WHERE ${key} IN (SELECT ${key} FROM ${T} WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= v_now FOR UPDATE)
      RETURNING lane_key, provider_key, account_id, tenant_id, concurrency_key, k1, k2, run_at, created_at, seq, priority),
    mb AS (SELECT DISTINCT ON (lane_key) * FROM m ORDER BY lane_key, ${order})
${upsertLaneHeads(L)}
  END IF;

  -- 5. the lanes loop (LANES.md), set-wise per lane, until the batch is full or no lane is
  -- ready (DESIGN §3: no head-of-line blocking, so no cap on the lanes examined). It ends:
  -- every round parks the best lane, empties it, or claims from it and moves its stored head
  -- strictly forward (the next head is probed strictly after the last key read), so the rounds
  -- are at most the parkings + the tasks claimed + one per stale head (+ rows a concurrent
  -- cancel / changePriority took out of the lane).
  WHILE v_n < p_limit LOOP
${bestLaneAndNext(L)}
    -- the bound: the second-best head, or above every key
    v_b := CASE WHEN FOUND THEN ARRAY[vb.h1, vb.h2, vb.h_run_at, vb.h_created_at, vb.h_seq]
      ELSE ARRAY[${BIG}, ${BIG}, ${BIG}, ${BIG}, ${BIG}]::bigint[] END;

${laneAdmission(t)}
    -- the lane's tasks from its head on (an index condition: the scan starts at the head instead
    -- of walking the index entries of tasks claimed before, dead until vacuumed) and before the
    -- bound, at most cap, in order, claimed in the same statement by their ctids (TID scan). The
    -- re-check of status and staged is written so that it cannot match the lane index's
    -- predicate: the UPDATE's only access path is then the TID scan (a table without statistics
    -- otherwise gets a full scan of the lane index). Out: the new row versions' ctids and the
    -- key of the last task read (where the next head's probe starts).
    WITH c AS (SELECT ctid AS t, k1, k2, run_at, created_at, seq FROM ${T}
        WHERE ${pending} AND lane_key = vl.lane_key
          AND (k1, k2, run_at, created_at, seq) >= (vl.h1, vl.h2, vl.h_run_at, vl.h_created_at, vl.h_seq)
          AND (k1, k2, run_at, created_at, seq) < (v_b[1], v_b[2], v_b[3], v_b[4], v_b[5])
        ORDER BY ${order} LIMIT v_cap),
    u AS (UPDATE ${T} x SET status = 'SUBMITTING', lease_owner = p_owner, lease_id = p_batch || ':' || x.id,
        lease_until = v_now + p_lease_ms, version = x.version + 1, updated_at = v_now
      FROM c WHERE x.ctid = c.t AND x.status || '' = 'PENDING_SUBMIT' AND x.staged + 0 = 0
      RETURNING x.ctid AS nt)
    SELECT (SELECT array_agg(nt) FROM u), (SELECT count(*) FROM u),
      (SELECT array_agg(ARRAY[c.k1, c.k2, c.run_at, c.created_at, c.seq]) FROM c)
      INTO v_got, v_m, v_keys;
    IF v_m > 0 THEN v_claimed := v_claimed || v_got; END IF;
    v_read := coalesce(array_length(v_keys, 1), 0);
    IF v_m > 0 THEN
      v_n := v_n + v_m;
      -- one unit of every limit of the lane per task
      IF v_interval IS NOT NULL THEN
        v_tat := vp.tat;
        FOR i IN 1..v_m LOOP v_tat := greatest(v_tat, v_now::double precision) + v_interval; END LOOP;
        UPDATE ${t.resources} SET tat = v_tat WHERE queue = p_queue AND rkey = vp.rkey;
      END IF;
      IF vl.account_id IS NOT NULL OR vl.tenant_id IS NOT NULL OR vl.concurrency_key IS NOT NULL THEN
        INSERT INTO ${t.resources} AS r (queue, rkey, in_use, tat, configured, limit_value, paused, qps, burst, account_concurrency)
        SELECT p_queue, k, v_m, 0, 0, NULL, 0, NULL, NULL, NULL FROM unnest(ARRAY[
          CASE WHEN vl.account_id IS NOT NULL THEN 'a:' || vl.provider_key || chr(31) || vl.account_id END,
          CASE WHEN vl.tenant_id IS NOT NULL THEN 't:' || vl.tenant_id END,
          CASE WHEN vl.concurrency_key IS NOT NULL THEN 'c:' || vl.concurrency_key END]::varchar[]) k WHERE k IS NOT NULL
        ON CONFLICT (queue, rkey) DO UPDATE SET in_use = r.in_use + v_m;
      END IF;
    END IF;
    -- the lane's next head: its first task after the last one read (or from its head on when
    -- none was read: its stored head was below its first task; h_seq - 1 as the start so that
    -- one strict comparison serves both), one probe that starts there;
    -- a row skipped by the re-check left the lane
    -- (one statement: the probe feeds the lane's UPDATE; no task found = no head, not ready)
    IF v_read > 0 THEN
      v_s := ARRAY[v_keys[v_read][1], v_keys[v_read][2], v_keys[v_read][3], v_keys[v_read][4], v_keys[v_read][5]];
    ELSE
      v_s := ARRAY[vl.h1, vl.h2, vl.h_run_at, vl.h_created_at, vl.h_seq - 1];
    END IF;
    WITH h AS (SELECT k1, k2, run_at, created_at, seq, priority FROM ${T}
        WHERE ${pending} AND lane_key = vl.lane_key AND (k1, k2, run_at, created_at, seq) > (v_s[1], v_s[2], v_s[3], v_s[4], v_s[5])
        ORDER BY ${order} LIMIT 1)
    UPDATE ${L} ln SET h1 = h.k1, h2 = h.k2, h_run_at = h.run_at, h_created_at = h.created_at, h_seq = h.seq, h_priority = h.priority,
      ready = CASE WHEN h.seq IS NULL THEN 0 ELSE ln.ready END
    FROM (SELECT 1) one LEFT JOIN h ON true
    WHERE ln.queue = p_queue AND ln.lane_key = vl.lane_key;
  END LOOP;

${nextWake(t)}
  -- the claimed rows, by the ctids their UPDATEs wrote (our own new row versions)
  IF v_n > 0 THEN
    RETURN QUERY SELECT 1::smallint, v_now, x.ctid, ${claimedCols} FROM ${T} x WHERE x.ctid = ANY (v_claimed);
  END IF;
  o_kind := 0;
  o_wake := v_wake;
  o_ctid := NULL;
  RETURN NEXT;
END
$fn$`;
}
