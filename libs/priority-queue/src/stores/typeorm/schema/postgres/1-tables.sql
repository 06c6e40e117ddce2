-- Schema version 1, PostgreSQL: tables and indexes (migrations.ts runs this file first, then the
-- functions and the trigger). {{prefix}} is the store's tablePrefix (default pq_).
--
-- tasks: one row per task. id is the primary key; seq (store-wide increasing sequence, the final
-- tie-break) has no index of its own: it is reached through the indexes that carry it (lane,
-- status). Every row version of a task was an entry in a seq index too, and a claim's and a
-- complete's entries repeat a key already there (full leaf pages cleaned by heap visits).
-- Order columns, all ascending: (k1, k2, run_at, created_at, seq), with k2 = -priority and
-- k1 = run_at - priority*T under aging (T = agingIntervalMs), else k1 = -priority
-- (core/order-key.ts). staged = 1 while a PENDING_SUBMIT task is not merged into its lane yet
-- (delayed, retried, re-prioritised); the claim merges every due staged task before it picks.
-- history / history_limit: per-task transitions, kept by the trigger of 1-task-history.sql.
-- With fairness: 'tenant' (DESIGN §7, the queue's queues.fairness) k1 = -priority and k2 = the
-- task's fair tag (core/fairness.ts): no aging then, so the same index orders priority desc, tag.
-- boost_at / boost_priority: the task's deadline boost as Task shows it (core/boost.ts, fixed at
-- create); boost_due = boost_at while the boost has not fired, NULL once it fired (whatever the
-- task's status then: a boost fires once), so tasks_boost_due holds only the unfired boosts.
--
-- Hot indexes hold only live rows (partial): a create, a claim and a complete change status,
-- so each is a non-HOT write that adds an entry to every index whose predicate its new row
-- version meets.
CREATE TABLE IF NOT EXISTS {{prefix}}tasks (
  seq bigserial NOT NULL,
  id varchar(255) NOT NULL,
  queue varchar(64) NOT NULL,
  idempotency_key varchar(255) NULL,
  type varchar(255) NOT NULL,
  payload text NULL,
  priority integer NOT NULL,
  k1 bigint NOT NULL,
  k2 bigint NOT NULL,
  run_at bigint NOT NULL,
  deadline_at bigint NULL,
  created_at bigint NOT NULL,
  status varchar(16) NOT NULL,
  staged smallint NOT NULL,
  lane_key varchar(64) NOT NULL,
  provider_key varchar(255) NOT NULL,
  account_id varchar(255) NULL,
  tenant_id varchar(255) NULL,
  concurrency_key varchar(255) NULL,
  version integer NOT NULL,
  attempts integer NOT NULL,
  max_attempts integer NOT NULL,
  idempotent smallint NOT NULL,
  lease_owner varchar(255) NULL,
  lease_id varchar(600) NULL,
  lease_until bigint NULL,
  result text NULL,
  error text NULL,
  external_id varchar(1024) NULL,
  next_poll_at bigint NULL,
  poll_errors integer NOT NULL,
  cancel_requested smallint NOT NULL,
  updated_at bigint NOT NULL,
  finished_at bigint NULL,
  history text NULL,
  history_limit smallint NOT NULL DEFAULT 0,
  boost_at bigint NULL,
  boost_priority integer NULL,
  boost_due bigint NULL,
  CONSTRAINT {{prefix}}tasks_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS {{prefix}}tasks_idem ON {{prefix}}tasks (queue, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- the claim's lane read and next-head probe (row comparisons on the whole key)
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_lane ON {{prefix}}tasks (queue, lane_key, k1, k2, run_at, created_at, seq) WHERE status = 'PENDING_SUBMIT' AND staged = 0;
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_staged ON {{prefix}}tasks (queue, run_at) WHERE status = 'PENDING_SUBMIT' AND staged = 1;
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_deadline ON {{prefix}}tasks (queue, deadline_at) WHERE deadline_at IS NOT NULL AND status IN ('PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING');
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_lease ON {{prefix}}tasks (queue, lease_until) WHERE lease_until IS NOT NULL AND status IN ('SUBMITTING', 'SUBMITTED', 'RUNNING');
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_poll ON {{prefix}}tasks (queue, next_poll_at) WHERE status IN ('SUBMITTED', 'RUNNING');
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_cancel ON {{prefix}}tasks (queue) WHERE cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING');
-- The removal trim (removeOnComplete / removeOnFail with a count or an age, sql/complete-removing.ts):
-- the finished tasks of one type and status, newest first, without reading the other types'.
-- Also purge's (sql/purge.pg.ts: a loose scan over the (type, status) groups, oldest first): the
-- only index of finished rows besides tasks_status_rest, so a complete writes one entry less
-- (a (queue, finished_at) index of its own cost every complete ~2 shared blocks).
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_trim ON {{prefix}}tasks (queue, type, status, finished_at, seq) WHERE finished_at IS NOT NULL;
-- the claim's due boosts, in (boost_due, seq) order (DESIGN §7)
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_boost_due ON {{prefix}}tasks (queue, boost_due) WHERE boost_due IS NOT NULL;
-- list() and stats() by status (sql/by-status.ts). Keyed by an expression only they write, so no
-- hot query can pick it: a plain (queue, status, seq) index matches two equality columns of
-- every hot query, and on a table without statistics the planner sometimes walked a whole
-- queue through it. PENDING_SUBMIT and SUBMITTING are left out (every task is in them right
-- after its create and its claim: two index entries per task saved); list() and stats() find
-- those through the lane / staged indexes and the lease index plus the one below (SUBMITTING
-- without a lease: no writer makes one, it stays empty; there so a list stays an index read
-- whatever the data). by-status.ts PG_STATUS_UNINDEXED names the statuses left out.
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_status_rest ON {{prefix}}tasks ((queue || chr(31) || status), seq) WHERE status NOT IN ('PENDING_SUBMIT', 'SUBMITTING');
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_submitting_nolease ON {{prefix}}tasks (queue, seq) WHERE status = 'SUBMITTING' AND lease_until IS NULL;

-- lanes: one row per set of admission keys, with the key of its best merged task as its head
-- (h1 .. h_seq, a lower bound: see 1-claim.sql); ready = has a head and is not parked;
-- parked_on = the resource that refused it, parked_until = time of its next rate token.
CREATE TABLE IF NOT EXISTS {{prefix}}lanes (
  queue varchar(64) NOT NULL,
  lane_key varchar(64) NOT NULL,
  provider_key varchar(255) NOT NULL,
  account_id varchar(255) NULL,
  tenant_id varchar(255) NULL,
  concurrency_key varchar(255) NULL,
  ready smallint NOT NULL,
  h1 bigint NULL,
  h2 bigint NULL,
  h_run_at bigint NULL,
  h_created_at bigint NULL,
  h_seq bigint NULL,
  h_priority integer NULL,
  parked_on varchar(520) NULL,
  parked_until bigint NULL,
  PRIMARY KEY (queue, lane_key)
);
CREATE INDEX IF NOT EXISTS {{prefix}}lanes_ready ON {{prefix}}lanes (queue, h1, h2, h_run_at, h_created_at, h_seq) WHERE ready = 1;
CREATE INDEX IF NOT EXISTS {{prefix}}lanes_parked ON {{prefix}}lanes (queue, parked_on) WHERE parked_on IS NOT NULL;
CREATE INDEX IF NOT EXISTS {{prefix}}lanes_parked_until ON {{prefix}}lanes (queue, parked_until) WHERE parked_until IS NOT NULL;

-- resources: limits and counters per provider ('p:'), account ('a:'), tenant ('t:'), default
-- tenant quota ('d:') and concurrency key ('c:'). Counters are written only under the queue's
-- advisory lock (the claim); limits by AdmissionGuard.
CREATE TABLE IF NOT EXISTS {{prefix}}resources (
  queue varchar(64) NOT NULL,
  rkey varchar(520) NOT NULL,
  in_use integer NOT NULL,
  tat double precision NOT NULL,
  configured smallint NOT NULL,
  limit_value integer NULL,
  paused smallint NOT NULL,
  qps double precision NULL,
  burst integer NULL,
  account_concurrency integer NULL,
  PRIMARY KEY (queue, rkey)
);

-- releases: slots freed by finishing tasks, append-only; the next claim applies them to the
-- counters under the queue lock, so a finishing task never waits for a claim.
CREATE TABLE IF NOT EXISTS {{prefix}}releases (id bigserial PRIMARY KEY, queue varchar(64) NOT NULL, lane_key varchar(64) NOT NULL);
CREATE INDEX IF NOT EXISTS {{prefix}}releases_queue ON {{prefix}}releases (queue, id);

-- lane_marks: lanes that got tasks created due. A create writes such tasks straight into their
-- lane (staged = 0) and, in the same statement, one row per lane with the key of its best new
-- task (sql/insert-tasks.pg.ts); the claim merges the marks into the lane heads. A task is so
-- written once, not written again only to be merged.
CREATE TABLE IF NOT EXISTS {{prefix}}lane_marks (
  id bigserial PRIMARY KEY,
  queue varchar(64) NOT NULL,
  lane_key varchar(64) NOT NULL,
  provider_key varchar(255) NOT NULL,
  account_id varchar(255) NULL,
  tenant_id varchar(255) NULL,
  concurrency_key varchar(255) NULL,
  k1 bigint NOT NULL,
  k2 bigint NOT NULL,
  run_at bigint NOT NULL,
  created_at bigint NOT NULL,
  seq bigint NOT NULL,
  priority integer NOT NULL
);
CREATE INDEX IF NOT EXISTS {{prefix}}lane_marks_queue ON {{prefix}}lane_marks (queue, id);

-- queues: per-queue settings (the aging interval every order key depends on; fairness
-- 'tenant' or NULL), fixed for the queue's life: init() refuses a store whose options differ.
CREATE TABLE IF NOT EXISTS {{prefix}}queues (queue varchar(64) PRIMARY KEY, aging_interval_ms bigint NOT NULL, fairness varchar(16) NULL);

-- DESIGN §7 fair share (core/fairness.ts), for queues with fairness 'tenant':
-- fair_levels: V[p], the virtual time of each priority level (absent = 0); claims advance it.
-- fair_tags: F[t,p], the finish tag of each tenant and level (absent = 0; tenant_key '' = the
--   tasks without a tenant); creates and re-tags write it; a row at or below V[p] may go.
-- tenant_weights: setLimits({ kind: 'tenantWeight' }) (absent = weight 1).
CREATE TABLE IF NOT EXISTS {{prefix}}fair_levels (queue varchar(64) NOT NULL, priority integer NOT NULL, vtime bigint NOT NULL, PRIMARY KEY (queue, priority));
CREATE TABLE IF NOT EXISTS {{prefix}}fair_tags (queue varchar(64) NOT NULL, tenant_key varchar(255) NOT NULL, priority integer NOT NULL, finish bigint NOT NULL, PRIMARY KEY (queue, tenant_key, priority));
CREATE TABLE IF NOT EXISTS {{prefix}}tenant_weights (queue varchar(64) NOT NULL, tenant_key varchar(255) NOT NULL, weight integer NOT NULL, PRIMARY KEY (queue, tenant_key));

-- sweeps: per queue, the sweep lease (sql/sweep-lease.ts): the store time until which the last
-- sweep that found work keeps the queue's other workers from sweeping, and who took it. init()
-- adds the queue's row; written only by its own one-row UPDATE, never inside another transaction.
CREATE TABLE IF NOT EXISTS {{prefix}}sweeps (queue varchar(64) PRIMARY KEY, lease_until bigint NOT NULL, owner varchar(255) NULL);
