-- Above ~400 lines on purpose: one function is one atomic claim (DESIGN §3: boosts, timeouts, rate
-- tokens, releases, marks, then the lane loop under one queue lock); split, its steps would need
-- their own locks and round trips. The header below names the core function each step mirrors.
-- {{prefix}}claim(queue, now, limit, leaseMs, owner, batch, lock1, lock2, aging, fair): the whole claimSubmissions
-- of the PostgreSQL store in ONE statement, called as an autocommit SELECT by
-- claim-submissions.pg.ts (plans cached by PL/pgSQL). Rows out as (kind, wake, ctid, task
-- columns): kind 3 = raised by a deadline boost (whole row as the boost wrote it, wake = the
-- priority before, in firing order), 2 = timed out (whole row), 1 = claimed (NULL in the columns the caller knows:
-- status, lease owner / id / end, updated_at, and staged, lane_key; wake carries the claim's now,
-- claim-submissions.pg.ts fills them in), 0 = the one row that carries the next wake-up hint.
--
-- Mirrors, and is held to the reference model by the model-based test with the rest of the store:
-- - the lane loop: claimFromLanes (core/claim-loop.ts), as the generic SQL path runs it
--   (stores/typeorm/claim-loop.ts): best ready lane first, a refused lane parked without reading
--   its tasks, claims until the batch is full or no lane is ready;
-- - admission: laneRefusalReason / consumeRoom (core/lane-admission.ts), the limits of
--   core/admission.ts (effectiveAccountLimit, effectiveTenantQuota, effectiveConcurrencyKeyLimit);
-- - GCRA: gcra / effectiveBurst (core/admission.ts), the v_tat loop of step 5;
-- - the order key: compareOrder (core/order-key.ts) as (k1, k2, run_at, created_at, seq), the
--   columns of order-columns.ts orderColumns (k2 = the fair tag with fairness);
-- - DESIGN §7 deadline boosts (step 0): core/boost.ts compareBoosts (order boost_at, then seq)
--   and boostedPriority (PENDING_SUBMIT below boost_priority), the priority change of
--   changePriority (version + 1, updated_at, staged again so step 4 re-keys its lane's head),
--   re-tagged with core/fairness.ts nextFinishTag through fair_tag() (1-fair-tags.sql) when the
--   queue has fairness; a boost fires once (boost_due = NULL), whatever it finds;
-- - DESIGN §7 fair share (step 7): core/fairness.ts advanceVirtualTime (V[p] = max(V[p], tag) of
--   each task claimed). Unlike FairTags.claimed it keeps F[t,p] rows at or below V[p]
--   (finishTagObsolete): creates read V[p] without a lock (1-fair-tags.sql), and one that read
--   it just before this claim committed would re-create a deleted F[t,p] from that older V[p],
--   below the tenant's last tag. Kept, F[t,p] only grows: a tenant's tags at a level strictly
--   increase in creation order whatever V[p] a create read. One row per tenant and level used.
-- Set-wise where the TypeScript loop goes task by task: the best ready lane gives, in ONE UPDATE,
-- every task it may give before the head of the second-best ready lane (bounded by the batch and
-- by its admission room: slots left, rate tokens due), so two interleaved lanes still alternate
-- exactly.
--
-- Lane heads: every task of a lane in the lane index has a key >= the lane's stored head, except
-- tasks whose create's mark is not applied yet (committed after this claim's step 4: for this
-- claim they do not exist yet). Heads only go down by merges (the least key), and a claim sets
-- the head to the lane's first task after the ones it claimed. So the lane's read starts at its
-- head (an index condition) and ends before the second-best head: it never walks the index
-- entries of tasks claimed before (dead until vacuumed).
--
-- Locks: pg_advisory_xact_lock(lock1, lock2), the queue lock, held until the statement's implicit
-- COMMIT: claims of one queue are serialised, and the resource counters and V[p]
-- ({{prefix}}fair_levels) are written only here.
-- Boosts (step 0) lock their task rows FOR UPDATE in (boost_due, seq) order, then fair_tag()
-- locks the fair_tags rows of their re-tags in its fixed order, as creates do (no lock cycle
-- with a create: it holds no other row this claim waits for).
-- A changePriority locks its task row, then the fair_tags row of its re-tag: one racing a boost
-- re-tag of the same tenant and level, on a task this claim then wants, can deadlock with it;
-- PostgreSQL aborts one of the two (40P01) and the store retries it (retryOnConflict).
-- Task rows are not locked before their UPDATE: only writers outside the queue lock change a
-- pending row (cancel, changePriority), and they take it out of the lane; the UPDATE finds the
-- row by ctid and re-checks status = PENDING_SUBMIT and staged = 0, so a row changed in between
-- is skipped (READ COMMITTED re-check), never claimed stale. The timeout and staged-merge steps
-- lock their rows FOR UPDATE (by id, the primary key). A mark written by a create that commits
-- while a claim runs is applied by the next claim; tasks of that create may be claimed from
-- their lane meanwhile, which is the order of a claim that started after the create.
--
-- aging / fair: the queue's aging interval (ms, 0 = none) and whether it has fairness, as the
-- caller's store has them: init() refuses a store whose options differ from the queues row, so
-- the claim never reads that row.
--
-- Plans: force_generic_plan. Every statement's access path is fixed by its index conditions
-- (partial indexes, row comparisons on the lane index, TID scans); PL/pgSQL's default re-planned
-- the larger statements on every call (their custom plans looked cheaper): 15% of a one-lane
-- claim. No parallel plans (max_parallel_workers_per_gather = 0): a generic plan estimates a
-- range on a parameter at a third of the table, so on a table of a million finished rows the boost
-- probe was planned as a Gather of two workers over an empty partial index (15 ms a claim to
-- start the workers); every statement here reads a few index entries, none gains from workers.
-- No sequential scans (enable_seqscan = off): the generic plans are made once per connection,
-- often while lanes holds a row or two, and then scanned lanes (and releases, resources) whole.
-- Every claim writes its lane row with a new head, an indexed column: a new row version whose
-- old one leaves a dead line pointer in the heap until VACUUM (~290 a page), so such a scan
-- reads one more page per ~290 claims since the last VACUUM (3 of them per claim: 24 pages each
-- after 8,000 claims of one lane, half of the claim's blocks). Through the indexes the reads stay
-- flat (the lane by its ctid, the empty partial index of parked lanes, the ready index whose
-- dead entries inserts clean up): 36 blocks per claim of 1 after 2,000 or 8,000 claims.
CREATE OR REPLACE FUNCTION {{prefix}}claim(
  p_queue varchar, p_now bigint, p_limit integer, p_lease_ms bigint, p_owner varchar, p_batch varchar,
  p_lock1 integer, p_lock2 integer, p_aging bigint, p_fair boolean)
RETURNS TABLE (
  o_kind smallint, o_wake bigint, o_ctid tid, o_seq bigint, o_id varchar,
  o_idempotency_key varchar, o_type varchar, o_payload text, o_priority integer, o_run_at bigint,
  o_deadline_at bigint, o_created_at bigint, o_status varchar, o_staged smallint,
  o_lane_key varchar, o_provider_key varchar, o_account_id varchar, o_tenant_id varchar,
  o_concurrency_key varchar, o_version integer, o_attempts integer, o_max_attempts integer,
  o_idempotent smallint, o_lease_owner varchar, o_lease_id varchar, o_lease_until bigint,
  o_result text, o_error text, o_external_id varchar, o_next_poll_at bigint, o_poll_errors integer,
  o_cancel_requested smallint, o_updated_at bigint, o_finished_at bigint, o_k2 bigint, o_boost_at bigint,
  o_boost_priority integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET max_parallel_workers_per_gather = 0
SET enable_seqscan = off
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
  v_bounded boolean;
  vl record;
  va record;
  v_due bigint;
  v_timeouts boolean;
  v_releases boolean;
  v_rate boolean;
  v_merge boolean;
  v_ids varchar[];
  v_from integer[];
  v_tags bigint[];
  v_keys_t varchar[];
  v_to integer[];
  v_unused varchar[];
BEGIN
  PERFORM pg_advisory_xact_lock(p_lock1, p_lock2);
  v_now := coalesce(p_now, (floor(extract(epoch from clock_timestamp()) * 1000))::bigint);

  -- whether steps 0 to 4 have anything to do, in ONE statement after the lock (its snapshot sees
  -- every claim before this one): nearly every claim finds nothing for them, and each probe is
  -- an index descent whatever it finds, but one statement instead of five (each statement of a
  -- function costs its own snapshot, plan check and executor start and end). Each probe reads
  -- the first entry its index gives (one row whatever the table holds). What a step reads when
  -- it runs is the newer: a row committed after this probe waits for the next claim, as it
  -- would have had it committed after this claim.
  -- - v_due: the first unfired deadline boost (tasks_boost_due), for step 0;
  -- - v_timeouts: a due candidate past its deadline (tasks_deadline), for step 1;
  -- - v_releases: a release to apply (releases_queue), for step 2;
  -- - v_rate: a lane whose rate token is due (lanes_parked_until), for step 3;
  -- - v_merge: a lane mark or a due staged task (lane_marks_queue, tasks_staged), for step 4;
  --   step 0 sets it when a boost re-staged a task.
  SELECT (SELECT boost_due FROM {{prefix}}tasks WHERE queue = p_queue AND boost_due IS NOT NULL ORDER BY boost_due LIMIT 1),
    EXISTS (SELECT 1 FROM {{prefix}}tasks WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL
      AND deadline_at <= v_now AND run_at <= v_now),
    EXISTS (SELECT 1 FROM {{prefix}}releases WHERE queue = p_queue),
    EXISTS (SELECT 1 FROM {{prefix}}lanes WHERE queue = p_queue AND parked_until IS NOT NULL AND parked_until <= v_now),
    EXISTS (SELECT 1 FROM {{prefix}}lane_marks WHERE queue = p_queue)
      OR EXISTS (SELECT 1 FROM {{prefix}}tasks WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= v_now)
    INTO v_due, v_timeouts, v_releases, v_rate, v_merge;

  -- 0. due deadline boosts fire before anything looks at the order (tasks_boost_due: unfired
  -- boosts only). Every due boost fires (boost_due = NULL); a task still PENDING_SUBMIT below
  -- its boost priority takes it, re-keyed as order-columns.ts orderColumns keys it (aging:
  -- k1 = run_at - P*T, k2 = -P; fairness: k1 = -P, k2 = its new tag; else k1 = k2 = -P) and
  -- staged, so step 4 merges it into its lane (the lane's head a lower bound again).
  IF v_due <= v_now THEN
    SELECT array_agg(b.id ORDER BY b.boost_due, b.seq) FILTER (WHERE b.raise), array_agg(b.priority ORDER BY b.boost_due, b.seq) FILTER (WHERE b.raise),
        array_agg(coalesce(b.tenant_id, '') ORDER BY b.boost_due, b.seq) FILTER (WHERE b.raise),
        array_agg(b.boost_priority ORDER BY b.boost_due, b.seq) FILTER (WHERE b.raise), array_agg(b.id) FILTER (WHERE NOT b.raise)
      INTO v_ids, v_from, v_keys_t, v_to, v_unused
      FROM (SELECT x.id, x.seq, x.boost_due, x.priority, x.tenant_id, x.boost_priority,
          x.status = 'PENDING_SUBMIT' AND x.boost_priority IS NOT NULL AND x.priority < x.boost_priority AS raise
        FROM {{prefix}}tasks x WHERE x.queue = p_queue AND x.boost_due IS NOT NULL AND x.boost_due <= v_now
        ORDER BY x.boost_due, x.seq FOR UPDATE) b;
    IF v_ids IS NOT NULL AND p_fair THEN
      v_tags := {{prefix}}fair_tag(p_queue, v_keys_t, v_to);
    END IF;
    -- the boosts that change nothing fire too: by the ids locked above, never a row this
    -- statement did not lock
    RETURN QUERY WITH f AS (UPDATE {{prefix}}tasks x SET boost_due = NULL WHERE x.id = ANY (v_unused)),
      b AS (SELECT * FROM unnest(v_ids, v_from, v_tags) WITH ORDINALITY AS b(id, from_priority, tag, ord)),
      u AS (UPDATE {{prefix}}tasks x SET boost_due = NULL, priority = x.boost_priority,
          k1 = CASE WHEN p_aging > 0 THEN x.run_at - x.boost_priority::bigint * p_aging ELSE -x.boost_priority::bigint END,
          k2 = CASE WHEN p_fair THEN b.tag ELSE -x.boost_priority::bigint END,
          staged = 1, version = x.version + 1, updated_at = v_now
        FROM b WHERE x.id = b.id
        RETURNING b.ord, b.from_priority, x.seq, x.id, x.idempotency_key, x.type, x.payload, x.priority, x.run_at, x.deadline_at, x.created_at, x.status, x.staged, x.lane_key, x.provider_key, x.account_id, x.tenant_id, x.concurrency_key, x.version, x.attempts, x.max_attempts, x.idempotent, x.lease_owner, x.lease_id, x.lease_until, x.result, x.error, x.external_id, x.next_poll_at, x.poll_errors, x.cancel_requested, x.updated_at, x.finished_at, x.k2, x.boost_at, x.boost_priority)
    SELECT 3::smallint, u.from_priority::bigint, NULL::tid, u.seq, u.id, u.idempotency_key, u.type, u.payload, u.priority, u.run_at, u.deadline_at, u.created_at, u.status, u.staged, u.lane_key, u.provider_key, u.account_id, u.tenant_id, u.concurrency_key, u.version, u.attempts, u.max_attempts, u.idempotent, u.lease_owner, u.lease_id, u.lease_until, u.result, u.error, u.external_id, u.next_poll_at, u.poll_errors, u.cancel_requested, u.updated_at, u.finished_at, u.k2, u.boost_at, u.boost_priority
      FROM u ORDER BY u.ord;
    IF v_ids IS NOT NULL THEN v_merge := true; END IF;
  END IF;

  -- 1. due candidates past their deadline (partial index on deadline_at of live rows). Behind
  -- the probe: an UPDATE that finds nothing still starts up, opening every index of tasks (a
  -- third of a claim's server time when it claims one).
  IF v_timeouts THEN
    RETURN QUERY WITH u AS (
      UPDATE {{prefix}}tasks x SET status = 'TIMED_OUT', staged = 0, version = x.version + 1, updated_at = v_now, finished_at = v_now,
        error = 'deadline passed before submit'
      WHERE x.id IN (SELECT id FROM {{prefix}}tasks WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL
        AND deadline_at <= v_now AND run_at <= v_now FOR UPDATE)
      RETURNING x.seq, x.id, x.idempotency_key, x.type, x.payload, x.priority, x.run_at, x.deadline_at, x.created_at, x.status, x.staged, x.lane_key, x.provider_key, x.account_id, x.tenant_id, x.concurrency_key, x.version, x.attempts, x.max_attempts, x.idempotent, x.lease_owner, x.lease_id, x.lease_until, x.result, x.error, x.external_id, x.next_poll_at, x.poll_errors, x.cancel_requested, x.updated_at, x.finished_at, x.k2, x.boost_at, x.boost_priority)
    SELECT 2::smallint, NULL::bigint, NULL::tid, u.* FROM u;
  END IF;

  -- 2. releases: counters down, lanes parked on those resources back to ready, 10,000 rows per
  -- statement, as many statements as there are rows (a release left for the next claim would
  -- keep a lane parked that may give this claim a task): again while a statement took 10,000
  IF v_releases THEN
    LOOP
      WITH d AS (DELETE FROM {{prefix}}releases WHERE id IN (SELECT id FROM {{prefix}}releases WHERE queue = p_queue ORDER BY id LIMIT 10000) RETURNING lane_key),
      k AS (SELECT x.rkey, count(*) AS n FROM d JOIN {{prefix}}lanes ln ON ln.queue = p_queue AND ln.lane_key = d.lane_key
        CROSS JOIN LATERAL (VALUES
          (CASE WHEN ln.account_id IS NOT NULL THEN 'a:' || ln.provider_key || chr(31) || ln.account_id END),
          (CASE WHEN ln.tenant_id IS NOT NULL THEN 't:' || ln.tenant_id END),
          (CASE WHEN ln.concurrency_key IS NOT NULL THEN 'c:' || ln.concurrency_key END)) x(rkey)
        WHERE x.rkey IS NOT NULL GROUP BY x.rkey),
      s AS (UPDATE {{prefix}}resources r SET in_use = GREATEST(0, r.in_use - k.n) FROM k WHERE r.queue = p_queue AND r.rkey = k.rkey),
      l AS (UPDATE {{prefix}}lanes SET parked_on = NULL, ready = CASE WHEN h_seq IS NULL OR parked_until IS NOT NULL THEN 0 ELSE 1 END
        WHERE queue = p_queue AND parked_on IN (SELECT rkey FROM k))
      SELECT count(*) INTO v_k FROM d;
      EXIT WHEN v_k < 10000;
    END LOOP;
  END IF;

  -- 3. lanes whose rate token is due (only queues with rate limits park so)
  IF v_rate THEN
    UPDATE {{prefix}}lanes SET parked_until = NULL, ready = CASE WHEN h_seq IS NULL OR parked_on IS NOT NULL THEN 0 ELSE 1 END
    WHERE queue = p_queue AND parked_until IS NOT NULL AND parked_until <= v_now;
  END IF;
  -- 4. lanes marked by creates and due staged tasks merged (staged = 0), in one upsert: a lane's
  -- head becomes the best marked / merged key when that is better than its stored head
  IF v_merge THEN
    WITH d AS (DELETE FROM {{prefix}}lane_marks WHERE queue = p_queue
      RETURNING lane_key, provider_key, account_id, tenant_id, concurrency_key, k1, k2, run_at, created_at, seq, priority),
    m AS (UPDATE {{prefix}}tasks SET staged = 0
      WHERE id IN (SELECT id FROM {{prefix}}tasks WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= v_now FOR UPDATE)
      RETURNING lane_key, provider_key, account_id, tenant_id, concurrency_key, k1, k2, run_at, created_at, seq, priority),
    mb AS (SELECT DISTINCT ON (lane_key) * FROM (SELECT * FROM d UNION ALL SELECT * FROM m) a ORDER BY lane_key, k1, k2, run_at, created_at, seq)
    INSERT INTO {{prefix}}lanes AS ln (queue, lane_key, provider_key, account_id, tenant_id, concurrency_key, ready,
      h1, h2, h_run_at, h_created_at, h_seq, h_priority, parked_on, parked_until)
    SELECT p_queue, lane_key, provider_key, account_id, tenant_id, concurrency_key, 1, k1, k2, run_at, created_at, seq, priority, NULL, NULL FROM mb
    ON CONFLICT (queue, lane_key) DO UPDATE SET h1 = excluded.h1, h2 = excluded.h2, h_run_at = excluded.h_run_at,
      h_created_at = excluded.h_created_at, h_seq = excluded.h_seq, h_priority = excluded.h_priority,
      ready = CASE WHEN ln.parked_on IS NULL AND ln.parked_until IS NULL THEN 1 ELSE 0 END
    WHERE ln.h_seq IS NULL OR (excluded.h1, excluded.h2, excluded.h_run_at, excluded.h_created_at, excluded.h_seq)
      < (ln.h1, ln.h2, ln.h_run_at, ln.h_created_at, ln.h_seq);
  END IF;

  -- 5. the lanes loop (LANES.md), set-wise per lane, until the batch is full or no lane is
  -- ready (DESIGN §3: no head-of-line blocking, so no cap on the lanes examined). It ends:
  -- every round parks the best lane, empties it, or claims from it and moves its stored head
  -- strictly forward (the next head is strictly after the last key read), so the rounds are at
  -- most the parkings + the tasks claimed + one per stale head (+ rows a concurrent cancel /
  -- changePriority took out of the lane). Two statements per round that claims.
  WHILE v_n < p_limit LOOP
    -- the best ready lane (lane_tid: its row version's ctid), the head of the second-best (b1 ..
    -- b5, NULL when it is alone: one read of the ready index, two entries; two lanes never share
    -- a head, each head is the key of a task of its own lane) and the lane's provider resource
    -- (pause, rate; p_*). The lane's row is written below by that ctid (a TID scan): lanes rows
    -- change only under the queue lock, which this claim holds. Every claim writes its lane with
    -- a new head (an indexed column: a new row version and index entries), so until VACUUM the
    -- primary key holds an entry per version of the row; a lookup by key walks them.
    SELECT w.*, p.rkey AS p_rkey, p.paused AS p_paused, p.qps AS p_qps, p.burst AS p_burst, p.tat AS p_tat,
        p.account_concurrency AS p_account_concurrency INTO vl
      FROM (SELECT t.*, lead(t.h1) OVER o AS b1, lead(t.h2) OVER o AS b2, lead(t.h_run_at) OVER o AS b3,
            lead(t.h_created_at) OVER o AS b4, lead(t.h_seq) OVER o AS b5
          FROM (SELECT ctid AS lane_tid, lane_key, provider_key, account_id, tenant_id, concurrency_key, h1, h2, h_run_at, h_created_at, h_seq
            FROM {{prefix}}lanes WHERE queue = p_queue AND ready = 1 ORDER BY h1, h2, h_run_at, h_created_at, h_seq LIMIT 2) t
          WINDOW o AS (ORDER BY t.h1, t.h2, t.h_run_at, t.h_created_at, t.h_seq)
          ORDER BY t.h1, t.h2, t.h_run_at, t.h_created_at, t.h_seq LIMIT 1) w
      LEFT JOIN {{prefix}}resources p ON p.queue = p_queue AND p.rkey = 'p:' || w.provider_key;
    EXIT WHEN NOT FOUND;
    -- the bound: the second-best head, or above every key
    v_bounded := vl.b5 IS NOT NULL;
    v_b := CASE WHEN v_bounded THEN ARRAY[vl.b1, vl.b2, vl.b3, vl.b4, vl.b5]
      ELSE ARRAY[9223372036854775807, 9223372036854775807, 9223372036854775807, 9223372036854775807, 9223372036854775807]::bigint[] END;

    -- admission of the lane (pause, rate, account, tenant, concurrency key): the first limit
    -- without room parks it; else v_cap = how many tasks it may start now
    v_cap := p_limit - v_n;
    v_park := NULL;
    v_until := NULL;
    v_interval := NULL;
    IF vl.p_paused = 1 THEN
      v_park := vl.p_rkey;
    ELSIF vl.p_qps IS NOT NULL THEN
      v_interval := 1000::double precision / vl.p_qps;
      v_burst := coalesce(vl.p_burst, 1);
      v_tat := vl.p_tat;
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
      SELECT in_use, limit_value INTO va FROM {{prefix}}resources WHERE queue = p_queue AND rkey = 'a:' || vl.provider_key || chr(31) || vl.account_id;
      v_lim := coalesce(va.limit_value, vl.p_account_concurrency);
      IF v_lim IS NOT NULL THEN
        v_room := v_lim - coalesce(va.in_use, 0);
        IF v_room <= 0 THEN v_park := 'a:' || vl.provider_key || chr(31) || vl.account_id; ELSE v_cap := least(v_cap, v_room); END IF;
      END IF;
    END IF;
    IF v_park IS NULL AND v_until IS NULL AND vl.tenant_id IS NOT NULL THEN
      SELECT x.in_use, coalesce(x.limit_value, (SELECT d.limit_value FROM {{prefix}}resources d WHERE d.queue = p_queue AND d.rkey = 'd:')) AS q INTO va
        FROM (SELECT 1) one LEFT JOIN {{prefix}}resources x ON x.queue = p_queue AND x.rkey = 't:' || vl.tenant_id;
      IF va.q IS NOT NULL THEN
        v_room := va.q - coalesce(va.in_use, 0);
        IF v_room <= 0 THEN v_park := 't:' || vl.tenant_id; ELSE v_cap := least(v_cap, v_room); END IF;
      END IF;
    END IF;
    IF v_park IS NULL AND v_until IS NULL AND vl.concurrency_key IS NOT NULL THEN
      SELECT in_use, limit_value INTO va FROM {{prefix}}resources WHERE queue = p_queue AND rkey = 'c:' || vl.concurrency_key;
      v_room := coalesce(va.limit_value, 1) - coalesce(va.in_use, 0);
      IF v_room <= 0 THEN v_park := 'c:' || vl.concurrency_key; ELSE v_cap := least(v_cap, v_room); END IF;
    END IF;
    IF v_park IS NOT NULL OR v_until IS NOT NULL THEN
      -- every task of a lane shares its admission keys: park the lane, whatever its head
      UPDATE {{prefix}}lanes SET parked_on = v_park, parked_until = v_until, ready = 0 WHERE ctid = vl.lane_tid AND queue = p_queue AND lane_key = vl.lane_key;
      CONTINUE;
    END IF;
    -- ONE statement claims from the lane, moves its head and returns the claimed rows:
    -- - c: the lane's tasks from its head on (an index condition: the scan starts at the head
    --   instead of walking the index entries of tasks claimed before, dead until vacuumed) and
    --   before the bound, in order, at most cap + 1;
    -- - u: the first cap of them claimed by their ctids (TID scan). The re-check of status and
    --   staged is written so that it cannot match the lane index's predicate: the UPDATE's only
    --   access path is then the TID scan (a table without statistics otherwise gets a full scan
    --   of the lane index). A row the re-check skips (a concurrent cancel or changePriority took
    --   it out of the lane) is read, not claimed;
    -- - h: the lane's next head, its first task after the last one read: the cap + 1st task
    --   read when there is one (no second index read); else, when the bound ended the read, one
    --   probe that starts after the last task read (or from the stored head when none was read:
    --   it was below the lane's first task; h_seq - 1 so that one strict comparison serves
    --   both); else (the read reached the lane's end) none;
    -- - l: the lane's new head (none = not ready), the row by its ctid.
    -- The claimed rows go out as their UPDATE wrote them, NULL in the columns the caller knows.
    RETURN QUERY
    WITH c AS (SELECT ctid AS t, k1, k2, run_at, created_at, seq, priority FROM {{prefix}}tasks
        WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 0 AND lane_key = vl.lane_key
          AND (k1, k2, run_at, created_at, seq) >= (vl.h1, vl.h2, vl.h_run_at, vl.h_created_at, vl.h_seq)
          AND (k1, k2, run_at, created_at, seq) < (v_b[1], v_b[2], v_b[3], v_b[4], v_b[5])
        ORDER BY k1, k2, run_at, created_at, seq LIMIT v_cap + 1),
    u AS (UPDATE {{prefix}}tasks x SET status = 'SUBMITTING', lease_owner = p_owner, lease_id = p_batch || ':' || x.id,
        lease_until = v_now + p_lease_ms, version = x.version + 1, updated_at = v_now
      FROM (SELECT t FROM c ORDER BY k1, k2, run_at, created_at, seq LIMIT v_cap) cl
      WHERE x.ctid = cl.t AND x.status || '' = 'PENDING_SUBMIT' AND x.staged + 0 = 0
      RETURNING 1::smallint, v_now, x.ctid, x.seq, x.id, x.idempotency_key, x.type, x.payload, x.priority, x.run_at, x.deadline_at, x.created_at, NULL::varchar, NULL::smallint, NULL::varchar, x.provider_key, x.account_id, x.tenant_id, x.concurrency_key, x.version, x.attempts, x.max_attempts, x.idempotent, NULL::varchar, NULL::varchar, NULL::bigint, x.result, x.error, x.external_id, x.next_poll_at, x.poll_errors, x.cancel_requested, NULL::bigint, x.finished_at, x.k2, x.boost_at, x.boost_priority),
    e AS ((SELECT k1, k2, run_at, created_at, seq FROM c ORDER BY k1 DESC, k2 DESC, run_at DESC, created_at DESC, seq DESC LIMIT 1)
      UNION ALL SELECT vl.h1, vl.h2, vl.h_run_at, vl.h_created_at, vl.h_seq - 1 WHERE NOT EXISTS (SELECT 1 FROM c)),
    h AS ((SELECT k1, k2, run_at, created_at, seq, priority FROM c ORDER BY k1, k2, run_at, created_at, seq OFFSET v_cap LIMIT 1)
      UNION ALL
      SELECT p.* FROM (SELECT k1, k2, run_at, created_at, seq, priority FROM {{prefix}}tasks
          WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 0 AND lane_key = vl.lane_key
            AND (k1, k2, run_at, created_at, seq) > ((SELECT e.k1 FROM e), (SELECT e.k2 FROM e), (SELECT e.run_at FROM e), (SELECT e.created_at FROM e), (SELECT e.seq FROM e))
          ORDER BY k1, k2, run_at, created_at, seq LIMIT 1) p
        WHERE v_bounded AND (SELECT count(*) FROM c) <= v_cap),
    l AS (UPDATE {{prefix}}lanes ln SET h1 = h.k1, h2 = h.k2, h_run_at = h.run_at, h_created_at = h.created_at, h_seq = h.seq, h_priority = h.priority,
        ready = CASE WHEN h.seq IS NULL THEN 0 ELSE ln.ready END
      FROM (SELECT 1) one LEFT JOIN h ON true
      WHERE ln.ctid = vl.lane_tid AND ln.queue = p_queue AND ln.lane_key = vl.lane_key)
    SELECT * FROM u;
    GET DIAGNOSTICS v_m = ROW_COUNT;
    IF v_m > 0 THEN
      v_n := v_n + v_m;
      -- one unit of every limit of the lane per task
      IF v_interval IS NOT NULL THEN
        v_tat := vl.p_tat;
        FOR i IN 1..v_m LOOP v_tat := greatest(v_tat, v_now::double precision) + v_interval; END LOOP;
        UPDATE {{prefix}}resources SET tat = v_tat WHERE queue = p_queue AND rkey = vl.p_rkey;
      END IF;
      IF vl.account_id IS NOT NULL OR vl.tenant_id IS NOT NULL OR vl.concurrency_key IS NOT NULL THEN
        INSERT INTO {{prefix}}resources AS r (queue, rkey, in_use, tat, configured, limit_value, paused, qps, burst, account_concurrency)
        SELECT p_queue, k, v_m, 0, 0, NULL, 0, NULL, NULL, NULL FROM unnest(ARRAY[
          CASE WHEN vl.account_id IS NOT NULL THEN 'a:' || vl.provider_key || chr(31) || vl.account_id END,
          CASE WHEN vl.tenant_id IS NOT NULL THEN 't:' || vl.tenant_id END,
          CASE WHEN vl.concurrency_key IS NOT NULL THEN 'c:' || vl.concurrency_key END]::varchar[]) k WHERE k IS NOT NULL
        ON CONFLICT (queue, rkey) DO UPDATE SET in_use = r.in_use + v_m;
      END IF;
    END IF;
  END LOOP;

  -- 6. next wake-up (batch not full): next delayed task, next rate token of a parked lane
  IF v_n < p_limit THEN
    SELECT LEAST((SELECT min(run_at) FROM {{prefix}}tasks WHERE queue = p_queue AND status = 'PENDING_SUBMIT' AND staged = 1),
      (SELECT min(parked_until) FROM {{prefix}}lanes WHERE queue = p_queue AND parked_until IS NOT NULL)) INTO v_wake;
  END IF;
  -- 7. fair share: V[p] = max(V[p], tag) over the tasks claimed at each level (F[t,p] rows are
  -- kept, see the header). This claim's tasks by the lease index: every one has lease_until =
  -- now + leaseMs and the lease id <batch>:<id> (the batch id is this call's own).
  IF v_n > 0 AND p_fair THEN
    INSERT INTO {{prefix}}fair_levels AS fl (queue, priority, vtime)
      SELECT p_queue, x.priority, max(x.k2) FROM {{prefix}}tasks x
        WHERE x.queue = p_queue AND x.lease_until = v_now + p_lease_ms AND x.status = 'SUBMITTING' AND x.lease_id = p_batch || ':' || x.id
        GROUP BY x.priority ORDER BY x.priority
      ON CONFLICT (queue, priority) DO UPDATE SET vtime = greatest(fl.vtime, excluded.vtime);
  END IF;

  o_kind := 0;
  o_wake := v_wake;
  o_ctid := NULL;
  RETURN NEXT;
END
$fn$;
