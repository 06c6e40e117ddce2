-- DESIGN §7 fair share on PostgreSQL: the tagging rule, for the create statement
-- (sql/insert-tasks.pg.ts) and the claim function's deadline boosts (1-claim.sql).
--
-- {{prefix}}next_finish_tag(finish, vtime, add): Mirrors core/fairness.ts nextFinishTag applied
-- `add / increment` times in a row: max(F[t,p], V[p]) + add, where add = n * floor(1_000_000 / w)
-- for n tasks of one tenant and level (each task after the first starts from the tag before it,
-- which is already >= V[p]). Past MAX_FAIR_TAG (2^63 - 1) it raises SQLSTATE PQF01
-- (schema/pg-functions.ts PG_FAIR_TAG_OVERFLOW: the store throws FairTagOverflowError), so the
-- statement that called it writes nothing.
--
-- {{prefix}}fair_tag(queue, tenant_keys, priorities): the fair tags of tasks created (or moved to
-- another level) in this order, one per array element, in the same order; F[t,p] takes the last
-- tag of each (tenant, level). Mirrors core/fairness.ts FairTags.tag called once per element:
-- tenant key = tenantKeyOf(tenantId) ('' for no tenant), weight from {{prefix}}tenant_weights
-- (absent = DEFAULT_TENANT_WEIGHT 1), increment floor(FAIR_QUANTUM / w) (fairIncrement), V[p]
-- from {{prefix}}fair_levels (absent = 0). Set-wise: one upsert per call, each (tenant, level)
-- row written once with n tasks' worth (next_finish_tag with add = n * increment); the k-th
-- task of a group gets F_new - (n - k) * increment.
--
-- Locks: next_finish_tag none. fair_tag: the upsert (INSERT ... ON CONFLICT DO UPDATE ...
-- RETURNING) takes the row lock of each (queue, tenant_key, priority) row of
-- {{prefix}}fair_tags, in (tenant_key, priority) order, and holds it to the end of the caller's
-- transaction. A second caller on the same row waits for the first's COMMIT and then computes
-- from the committed F (READ COMMITTED: ON CONFLICT DO UPDATE updates the newest row version,
-- its SET reads that version); a row created by two callers at once is inserted by one, the
-- other waits on its index entry and takes the DO UPDATE path. So no two callers get the same
-- tag and no F update is lost, across processes, without the queue lock: creates of different
-- tenants and levels never wait for each other, and a create waits for a claim only on a row
-- that claim's deadline boosts re-tag. Every caller takes its rows in the same order and takes
-- no other lock after them, so two callers cannot deadlock on them. V[p] is
-- read, not locked: only claims advance it (under the queue lock); a create running while a
-- claim commits may tag from the V[p] before that claim, as it would had it run just before the
-- claim (its tasks were not candidates of that claim either way).
CREATE OR REPLACE FUNCTION {{prefix}}next_finish_tag(p_finish bigint, p_vtime bigint, p_add bigint)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
  v numeric := greatest(p_finish, p_vtime)::numeric + p_add;
BEGIN
  IF v > 9223372036854775807 THEN
    RAISE EXCEPTION 'fair tag overflow: a finish tag would pass 2^63 - 1' USING ERRCODE = 'PQF01';
  END IF;
  RETURN v::bigint;
END
$fn$;

CREATE OR REPLACE FUNCTION {{prefix}}fair_tag(p_queue varchar, p_tenant_keys varchar[], p_priorities integer[])
RETURNS bigint[] LANGUAGE plpgsql AS $fn$
DECLARE
  v_tags bigint[];
BEGIN
  WITH t AS (SELECT k.tk, k.pri, k.ord, row_number() OVER (PARTITION BY k.tk, k.pri ORDER BY k.ord) AS rk
      FROM unnest(p_tenant_keys, p_priorities) WITH ORDINALITY AS k(tk, pri, ord)),
  g AS (SELECT t.tk, t.pri, count(*) AS n, (1000000 / coalesce(min(w.weight), 1))::bigint AS inc, coalesce(min(v.vtime), 0) AS vt
      FROM t LEFT JOIN {{prefix}}tenant_weights w ON w.queue = p_queue AND w.tenant_key = t.tk
        LEFT JOIN {{prefix}}fair_levels v ON v.queue = p_queue AND v.priority = t.pri
      GROUP BY t.tk, t.pri),
  f AS (INSERT INTO {{prefix}}fair_tags AS f (queue, tenant_key, priority, finish)
      SELECT p_queue, g.tk, g.pri, {{prefix}}next_finish_tag(0, g.vt, g.n * g.inc) FROM g ORDER BY g.tk, g.pri
      ON CONFLICT (queue, tenant_key, priority) DO UPDATE
        SET finish = {{prefix}}next_finish_tag(f.finish, (SELECT g.vt FROM g WHERE g.tk = excluded.tenant_key AND g.pri = excluded.priority),
          (SELECT g.n * g.inc FROM g WHERE g.tk = excluded.tenant_key AND g.pri = excluded.priority))
      RETURNING f.tenant_key, f.priority, f.finish)
  SELECT array_agg(f.finish - (g.n - t.rk) * g.inc ORDER BY t.ord) INTO v_tags
    FROM t JOIN g ON g.tk = t.tk AND g.pri = t.pri JOIN f ON f.tenant_key = t.tk AND f.priority = t.pri;
  RETURN v_tags;
END
$fn$;
