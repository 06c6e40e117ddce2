import type { TableNames } from '../names';

/**
 * Server-side functions of the PostgreSQL dialect (schema version 2), one round trip per hot
 * operation, plans cached by PL/pgSQL:
 *
 * - `<prefix>claim(...)`: the WHOLE claimSubmissions transaction of claim-submissions.ts
 *   (queue lock, timeouts, releases, rate unparking, staged merge, the lanes loop with
 *   admission and parking, the claimed rows, the next wake-up), called as one autocommit
 *   statement: the advisory lock is held until that statement's implicit COMMIT.
 *
 * The lanes loop claims set-wise: the best ready lane L gives, in ONE UPDATE, every task it
 * may give before the head of the second-best ready lane (bounded by the batch and by L's
 * admission room: slots left, rate tokens due), so a batch from one lane costs one statement,
 * while two interleaved lanes still alternate exactly. A refused lane is parked without
 * reading its tasks. After a lane gave tasks, its stored head becomes its true next head.
 *
 * Rows come back as (kind, wake, task columns): kind 1 = claimed, 2 = timed out, 0 = the
 * row that carries `wake` (the next wake-up hint, only when the batch is not full).
 */

/** Task columns the functions return, with their PostgreSQL types (the rows.ts TASK_COLUMNS order). */
export const PG_TASK_RESULT: ReadonlyArray<readonly [string, string]> = [
  ['seq', 'bigint'], ['id', 'varchar'], ['idempotency_key', 'varchar'], ['type', 'varchar'], ['payload', 'text'],
  ['priority', 'integer'], ['run_at', 'bigint'], ['deadline_at', 'bigint'], ['created_at', 'bigint'], ['status', 'varchar'],
  ['staged', 'smallint'], ['lane_key', 'varchar'], ['provider_key', 'varchar'], ['account_id', 'varchar'],
  ['tenant_id', 'varchar'], ['concurrency_key', 'varchar'], ['version', 'integer'], ['attempts', 'integer'],
  ['max_attempts', 'integer'], ['idempotent', 'smallint'], ['lease_owner', 'varchar'], ['lease_id', 'varchar'],
  ['lease_until', 'bigint'], ['result', 'text'], ['error', 'text'], ['external_id', 'varchar'], ['next_poll_at', 'bigint'],
  ['poll_errors', 'integer'], ['cancel_requested', 'smallint'], ['updated_at', 'bigint'], ['finished_at', 'bigint'],
];

export function pgClaimFunctionName(t: TableNames): string {
  return `${t.prefix}claim`;
}

export function pgCompleteFunctionName(t: TableNames): string {
  return `${t.prefix}complete`;
}

export function pgClaimPollsFunctionName(t: TableNames): string {
  return `${t.prefix}claim_polls`;
}

export function pgFunctionsV2(t: TableNames): string[] {
  // the DROP: a later version's claim (another result type) left behind by dropped tables
  // would make CREATE OR REPLACE fail
  return [
    ...statusIndex(t),
    `DROP FUNCTION IF EXISTS ${pgClaimFunctionName(t)}(varchar, bigint, integer, bigint, varchar, varchar, integer, integer)`,
    claimFunction(t),
    completeFunction(t),
    claimPollsFunction(t),
  ];
}

/**
 * v1's index (queue, status, seq) matched two equality columns of EVERY hot query, like the hot
 * partial indexes do; on a table without statistics (new, or not yet analyzed) the planner
 * rates both alike and sometimes walks the whole queue through it (then sorts). Its
 * replacement is keyed by an expression only list() and stats() write, so no hot query can
 * pick it: `(queue || chr(31) || status, seq)` (queue names contain no control character).
 */
function statusIndex(t: TableNames): string[] {
  return [
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_status ON ${t.tasks} ((queue || chr(31) || status), seq)`,
    `DROP INDEX IF EXISTS ${t.tasks}_list`,
  ];
}

const NOW_MS = '(floor(extract(epoch from statement_timestamp()) * 1000))::bigint';

/**
 * `<prefix>complete(...)`: a batch of complete() calls in one round trip (the store gathers the
 * calls of one event-loop turn). Each task: the fenced UPDATE by the id index (the queue
 * compared as a filter, see sql/by-id.ts), a `releases` row when its lane holds slots, the row
 * as written. A task whose fence does not match is simply absent from the result.
 */
function completeFunction(t: TableNames): string {
  const { tasks: T, releases: R } = t;
  return `CREATE OR REPLACE FUNCTION ${pgCompleteFunctionName(t)}(
  p_queue varchar, p_nows bigint[], p_ids varchar[], p_leases varchar[], p_versions integer[], p_statuses varchar[],
  p_results text[], p_errors text[])
RETURNS SETOF ${T}
LANGUAGE plpgsql
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $fn$
DECLARE
  v_now bigint := ${NOW_MS};
BEGIN
  -- one statement for the batch: a nested loop over the calls, each row found by the id index
  RETURN QUERY
  WITH i AS (SELECT * FROM unnest(p_ids, p_leases, p_versions, p_statuses, p_results, p_errors, p_nows)
      AS i(id, lease_id, version, status, result, error, now)),
  u AS (UPDATE ${T} x SET status = i.status, result = i.result, error = i.error, finished_at = coalesce(i.now, v_now),
      lease_owner = NULL, lease_id = NULL, lease_until = NULL, version = x.version + 1, updated_at = coalesce(i.now, v_now)
    FROM i
    WHERE x.id = i.id AND x.queue || '' = p_queue AND x.lease_id = i.lease_id AND x.version = i.version
      AND x.status IN ('SUBMITTING', 'SUBMITTED', 'RUNNING')
    RETURNING x.*),
  r AS (INSERT INTO ${R} (queue, lane_key)
    SELECT p_queue, lane_key FROM u WHERE account_id IS NOT NULL OR tenant_id IS NOT NULL OR concurrency_key IS NOT NULL)
  SELECT * FROM u;
END
$fn$`;
}

/**
 * `<prefix>claim_polls(...)`: claimPolls in one round trip (cancel requests first, then due
 * polls, `FOR UPDATE SKIP LOCKED`, no queue lock), see sql/claim-polls.ts.
 */
export function claimPollsFunction(t: TableNames, key: 'seq' | 'id' = 'seq'): string {
  const { tasks: T } = t;
  const set = `lease_owner = p_owner, lease_id = p_batch || ':' || id, lease_until = v_now + p_lease_ms, version = version + 1, updated_at = v_now`;
  const free = '(lease_until IS NULL OR lease_until <= v_now)';
  return `CREATE OR REPLACE FUNCTION ${pgClaimPollsFunctionName(t)}(
  p_queue varchar, p_now bigint, p_limit integer, p_lease_ms bigint, p_owner varchar, p_batch varchar)
RETURNS SETOF ${T}
LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint := coalesce(p_now, ${NOW_MS});
  v_n integer;
BEGIN
  RETURN QUERY WITH u AS (UPDATE ${T} SET ${set}
    WHERE ${key} IN (SELECT ${key} FROM ${T} WHERE queue = p_queue AND cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING') AND ${free}
      ORDER BY next_poll_at LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING *) SELECT * FROM u;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  IF v_n < p_limit THEN
    RETURN QUERY WITH u AS (UPDATE ${T} SET ${set}
      WHERE ${key} IN (SELECT ${key} FROM ${T} WHERE queue = p_queue AND status IN ('SUBMITTED', 'RUNNING') AND next_poll_at <= v_now
        AND ${free} AND cancel_requested = 0 ORDER BY next_poll_at LIMIT p_limit - v_n FOR UPDATE SKIP LOCKED)
      RETURNING *) SELECT * FROM u;
  END IF;
END
$fn$`;
}

/**
 * Statement tail shared by the claim functions: from a CTE `mb` holding one best candidate per
 * lane (lane_key, admission keys, k1, k2, run_at, created_at, seq, priority), a lane's head moves
 * to it only when it is better than the stored head (or the lane has none).
 */
export function upsertLaneHeads(L: string): string {
  return `    INSERT INTO ${L} AS ln (queue, lane_key, provider_key, account_id, tenant_id, concurrency_key, ready,
      h1, h2, h_run_at, h_created_at, h_seq, h_priority, parked_on, parked_until)
    SELECT p_queue, lane_key, provider_key, account_id, tenant_id, concurrency_key, 1, k1, k2, run_at, created_at, seq, priority, NULL, NULL FROM mb
    ON CONFLICT (queue, lane_key) DO UPDATE SET h1 = excluded.h1, h2 = excluded.h2, h_run_at = excluded.h_run_at,
      h_created_at = excluded.h_created_at, h_seq = excluded.h_seq, h_priority = excluded.h_priority,
      ready = CASE WHEN ln.parked_on IS NULL AND ln.parked_until IS NULL THEN 1 ELSE 0 END
    WHERE ln.h_seq IS NULL OR (excluded.h1, excluded.h2, excluded.h_run_at, excluded.h_created_at, excluded.h_seq)
      < (ln.h1, ln.h2, ln.h_run_at, ln.h_created_at, ln.h_seq);`;
}

/** PL/pgSQL: the best ready lane into `vl` (exit the loop when none) and the next-best head into `vb`. */
export function bestLaneAndNext(L: string): string {
  const laneOrder = 'h1, h2, h_run_at, h_created_at, h_seq';
  return `    SELECT lane_key, provider_key, account_id, tenant_id, concurrency_key, h1, h2, h_run_at, h_created_at, h_seq INTO vl
      FROM ${L} WHERE queue = p_queue AND ready = 1 ORDER BY ${laneOrder} LIMIT 1;
    EXIT WHEN NOT FOUND;
    SELECT h1, h2, h_run_at, h_created_at, h_seq INTO vb
      FROM ${L} WHERE queue = p_queue AND ready = 1
        AND (h1, h2, h_run_at, h_created_at, h_seq) > (vl.h1, vl.h2, vl.h_run_at, vl.h_created_at, vl.h_seq)
      ORDER BY ${laneOrder} LIMIT 1;`;
}

const BIG = '9223372036854775807';

function claimFunction(t: TableNames): string {
  const { tasks: T, lanes: L, resources: S, releases: R } = t;
  const out = PG_TASK_RESULT.map(([c, ty]) => `o_${c} ${ty}`).join(', ');
  const cols = PG_TASK_RESULT.map(([c]) => `x.${c}`).join(', ');
  const order = 'k1, k2, run_at, created_at, seq';
  return `CREATE OR REPLACE FUNCTION ${pgClaimFunctionName(t)}(
  p_queue varchar, p_now bigint, p_limit integer, p_lease_ms bigint, p_owner varchar, p_batch varchar,
  p_lock1 integer, p_lock2 integer)
RETURNS TABLE (o_kind smallint, o_wake bigint, ${out})
LANGUAGE plpgsql AS $fn$
DECLARE
  v_now bigint;
  v_claimed bigint[] := '{}';
  v_timed bigint[];
  v_got bigint[];
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
  vh record;
BEGIN
  PERFORM pg_advisory_xact_lock(p_lock1, p_lock2);
  v_now := coalesce(p_now, (floor(extract(epoch from clock_timestamp()) * 1000))::bigint);

  -- 1. due candidates past their deadline (partial index on deadline_at of live rows)
  WITH u AS (
    UPDATE ${T} SET status = 'TIMED_OUT', staged = 0, version = version + 1, updated_at = v_now, finished_at = v_now,
      error = 'deadline passed before submit'
    WHERE seq IN (SELECT seq FROM ${T} WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL
      AND deadline_at <= v_now AND run_at <= v_now FOR UPDATE)
    RETURNING seq)
  SELECT array_agg(seq) INTO v_timed FROM u;

${releasesAndRate(t)}
  -- 4. merge due staged tasks: a lane's head changes only when the best merged task is better
  IF EXISTS (SELECT 1 FROM ${T} WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= v_now) THEN
    WITH m AS (UPDATE ${T} SET staged = 0
      WHERE seq IN (SELECT seq FROM ${T} WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= v_now FOR UPDATE)
      RETURNING lane_key, provider_key, account_id, tenant_id, concurrency_key, k1, k2, run_at, created_at, seq, priority),
    mb AS (SELECT DISTINCT ON (lane_key) * FROM m ORDER BY lane_key, ${order})
${upsertLaneHeads(L)}
  END IF;

  -- 5. the lanes loop (LANES.md), set-wise per lane
  WHILE v_n < p_limit LOOP
${bestLaneAndNext(L)}
    -- the bound: the second-best head, or above every key (so the bound is always an index condition)
    v_b := CASE WHEN FOUND THEN ARRAY[vb.h1, vb.h2, vb.h_run_at, vb.h_created_at, vb.h_seq]
      ELSE ARRAY[${BIG}, ${BIG}, ${BIG}, ${BIG}, ${BIG}]::bigint[] END;

${laneAdmission(t)}
    -- the lane's tasks that come before the second-best lane's head, locked and claimed at once
    WITH c AS (
      SELECT seq FROM ${T} WHERE queue = p_queue AND lane_key = vl.lane_key AND status = 'PENDING_SUBMIT' AND staged = 0
        AND (k1, k2, run_at, created_at, seq) < (v_b[1], v_b[2], v_b[3], v_b[4], v_b[5])
      ORDER BY ${order} LIMIT v_cap FOR UPDATE),
    u AS (UPDATE ${T} t SET status = 'SUBMITTING', lease_owner = p_owner, lease_id = p_batch || ':' || t.id,
        lease_until = v_now + p_lease_ms, version = t.version + 1, updated_at = v_now
      FROM c WHERE t.seq = c.seq RETURNING t.seq)
    SELECT array_agg(seq) INTO v_got FROM u;
    v_m := coalesce(cardinality(v_got), 0);
    IF v_m > 0 THEN
      v_claimed := v_claimed || v_got;
      v_n := v_n + v_m;
      -- one unit of every limit of the lane per task
      IF v_interval IS NOT NULL THEN
        v_tat := vp.tat;
        FOR i IN 1..v_m LOOP v_tat := greatest(v_tat, v_now::double precision) + v_interval; END LOOP;
        UPDATE ${S} SET tat = v_tat WHERE queue = p_queue AND rkey = vp.rkey;
      END IF;
      IF vl.account_id IS NOT NULL OR vl.tenant_id IS NOT NULL OR vl.concurrency_key IS NOT NULL THEN
        INSERT INTO ${S} AS r (queue, rkey, in_use, tat, configured, limit_value, paused, qps, burst, account_concurrency)
        SELECT p_queue, k, v_m, 0, 0, NULL, 0, NULL, NULL, NULL FROM unnest(ARRAY[
          CASE WHEN vl.account_id IS NOT NULL THEN 'a:' || vl.provider_key || chr(31) || vl.account_id END,
          CASE WHEN vl.tenant_id IS NOT NULL THEN 't:' || vl.tenant_id END,
          CASE WHEN vl.concurrency_key IS NOT NULL THEN 'c:' || vl.concurrency_key END]::varchar[]) k WHERE k IS NOT NULL
        ON CONFLICT (queue, rkey) DO UPDATE SET in_use = r.in_use + v_m;
      END IF;
    END IF;
    -- the lane's true next head (its stored head was a lower bound)
    SELECT k1, k2, run_at, created_at, seq, priority INTO vh FROM ${T}
      WHERE queue = p_queue AND lane_key = vl.lane_key AND status = 'PENDING_SUBMIT' AND staged = 0 ORDER BY ${order} LIMIT 1;
    IF FOUND THEN
      UPDATE ${L} SET h1 = vh.k1, h2 = vh.k2, h_run_at = vh.run_at, h_created_at = vh.created_at, h_seq = vh.seq, h_priority = vh.priority
      WHERE queue = p_queue AND lane_key = vl.lane_key;
    ELSE
      UPDATE ${L} SET h1 = NULL, h2 = NULL, h_run_at = NULL, h_created_at = NULL, h_seq = NULL, h_priority = NULL, ready = 0
      WHERE queue = p_queue AND lane_key = vl.lane_key;
    END IF;
  END LOOP;

${nextWake(t)}
  o_kind := 0;
  o_wake := v_wake;
  RETURN NEXT;
  IF v_n > 0 THEN
    RETURN QUERY SELECT 1::smallint, v_wake, ${cols} FROM ${T} x WHERE x.seq = ANY (v_claimed);
  END IF;
  IF v_timed IS NOT NULL THEN
    RETURN QUERY SELECT 2::smallint, v_wake, ${cols} FROM ${T} x WHERE x.seq = ANY (v_timed);
  END IF;
END
$fn$`;
}

/** Claim steps 2 and 3 (releases applied, rate-parked lanes due back to ready), shared by v2 and v3. */
export function releasesAndRate(t: TableNames): string {
  const { lanes: L, resources: S, releases: R } = t;
  return `  -- 2. releases: counters down, lanes parked on those resources back to ready (skipped when none),
  -- 10,000 rows per statement, as many statements as there are rows (a release left for the
  -- next claim would keep a lane parked that may give this claim a task)
  WHILE EXISTS (SELECT 1 FROM ${R} WHERE queue = p_queue) LOOP
    WITH d AS (DELETE FROM ${R} WHERE id IN (SELECT id FROM ${R} WHERE queue = p_queue ORDER BY id LIMIT 10000) RETURNING lane_key),
    k AS (SELECT x.rkey, count(*) AS n FROM d JOIN ${L} ln ON ln.queue = p_queue AND ln.lane_key = d.lane_key
      CROSS JOIN LATERAL (VALUES
        (CASE WHEN ln.account_id IS NOT NULL THEN 'a:' || ln.provider_key || chr(31) || ln.account_id END),
        (CASE WHEN ln.tenant_id IS NOT NULL THEN 't:' || ln.tenant_id END),
        (CASE WHEN ln.concurrency_key IS NOT NULL THEN 'c:' || ln.concurrency_key END)) x(rkey)
      WHERE x.rkey IS NOT NULL GROUP BY x.rkey),
    s AS (UPDATE ${S} r SET in_use = GREATEST(0, r.in_use - k.n) FROM k WHERE r.queue = p_queue AND r.rkey = k.rkey)
    UPDATE ${L} SET parked_on = NULL, ready = CASE WHEN h_seq IS NULL OR parked_until IS NOT NULL THEN 0 ELSE 1 END
    WHERE queue = p_queue AND parked_on IN (SELECT rkey FROM k);
  END LOOP;

  -- 3. lanes whose rate token is due
  UPDATE ${L} SET parked_until = NULL, ready = CASE WHEN h_seq IS NULL OR parked_on IS NOT NULL THEN 0 ELSE 1 END
  WHERE queue = p_queue AND parked_until IS NOT NULL AND parked_until <= v_now;`;
}

/**
 * Admission of the lane in `vl` (pause, rate, account, tenant, concurrency key): the first limit
 * without room parks it (and CONTINUEs the loop); else v_cap = how many tasks it may start now.
 */
export function laneAdmission(t: TableNames): string {
  const { lanes: L, resources: S } = t;
  return `    -- admission of the lane (pause, rate, account, tenant, concurrency key): the first limit
    -- without room parks it; else v_cap = how many tasks it may start now
    v_cap := p_limit - v_n;
    v_park := NULL;
    v_until := NULL;
    v_interval := NULL;
    SELECT rkey, paused, qps, burst, tat, account_concurrency INTO vp FROM ${S} WHERE queue = p_queue AND rkey = 'p:' || vl.provider_key;
    IF vp.paused = 1 THEN
      v_park := vp.rkey;
    ELSIF vp.qps IS NOT NULL THEN
      v_interval := 1000::double precision / vp.qps;
      v_burst := coalesce(vp.burst, 1);
      v_tat := vp.tat;
      v_k := 0;
      LOOP
        v_next := greatest(v_tat, v_now::double precision) + v_interval;
        EXIT WHEN NOT (v_next - v_now <= v_burst * v_interval + 1e-9);
        v_tat := v_next;
        v_k := v_k + 1;
        EXIT WHEN v_k >= v_cap;
      END LOOP;
      IF v_k = 0 THEN
        v_until := greatest(v_now + 1, ceil(v_next - v_burst * v_interval)::bigint);
      ELSE
        v_cap := v_k;
      END IF;
    END IF;
    IF v_park IS NULL AND v_until IS NULL AND vl.account_id IS NOT NULL THEN
      SELECT in_use, limit_value INTO va FROM ${S} WHERE queue = p_queue AND rkey = 'a:' || vl.provider_key || chr(31) || vl.account_id;
      v_lim := coalesce(va.limit_value, vp.account_concurrency);
      IF v_lim IS NOT NULL THEN
        v_room := v_lim - coalesce(va.in_use, 0);
        IF v_room <= 0 THEN v_park := 'a:' || vl.provider_key || chr(31) || vl.account_id; ELSE v_cap := least(v_cap, v_room); END IF;
      END IF;
    END IF;
    IF v_park IS NULL AND v_until IS NULL AND vl.tenant_id IS NOT NULL THEN
      SELECT x.in_use, coalesce(x.limit_value, (SELECT d.limit_value FROM ${S} d WHERE d.queue = p_queue AND d.rkey = 'd:')) AS q INTO va
        FROM (SELECT 1) one LEFT JOIN ${S} x ON x.queue = p_queue AND x.rkey = 't:' || vl.tenant_id;
      IF va.q IS NOT NULL THEN
        v_room := va.q - coalesce(va.in_use, 0);
        IF v_room <= 0 THEN v_park := 't:' || vl.tenant_id; ELSE v_cap := least(v_cap, v_room); END IF;
      END IF;
    END IF;
    IF v_park IS NULL AND v_until IS NULL AND vl.concurrency_key IS NOT NULL THEN
      SELECT in_use, limit_value INTO va FROM ${S} WHERE queue = p_queue AND rkey = 'c:' || vl.concurrency_key;
      v_room := coalesce(va.limit_value, 1) - coalesce(va.in_use, 0);
      IF v_room <= 0 THEN v_park := 'c:' || vl.concurrency_key; ELSE v_cap := least(v_cap, v_room); END IF;
    END IF;
    IF v_park IS NOT NULL OR v_until IS NOT NULL THEN
      -- every task of a lane shares its admission keys: park the lane, whatever its head
      UPDATE ${L} SET parked_on = v_park, parked_until = v_until, ready = 0 WHERE queue = p_queue AND lane_key = vl.lane_key;
      CONTINUE;
    END IF;`;
}

/** Step 6: the next wake-up when the batch is not full (next delayed task, next rate token). */
export function nextWake(t: TableNames): string {
  const { tasks: T, lanes: L } = t;
  return `  -- 6. next wake-up (batch not full): next delayed task, next rate token of a parked lane
  IF v_n < p_limit THEN
    SELECT LEAST((SELECT min(run_at) FROM ${T} WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1),
      (SELECT min(parked_until) FROM ${L} WHERE queue = p_queue AND parked_until IS NOT NULL)) INTO v_wake;
  END IF;`;
}

export function pgFunctionsUndo(t: TableNames): string[] {
  return [
    `DROP FUNCTION IF EXISTS ${pgClaimFunctionName(t)}(varchar, bigint, integer, bigint, varchar, varchar, integer, integer)`,
    `DROP FUNCTION IF EXISTS ${pgCompleteFunctionName(t)}(varchar, bigint[], varchar[], varchar[], integer[], varchar[], text[], text[])`,
    `DROP FUNCTION IF EXISTS ${pgClaimPollsFunctionName(t)}(varchar, bigint, integer, bigint, varchar, varchar)`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_list ON ${t.tasks} (queue, status, seq)`,
    `DROP INDEX IF EXISTS ${t.tasks}_status`,
  ];
}
