-- Schema version 1, SQLite: tables and indexes (migrations.ts runs this file first, then the
-- trigger). {{prefix}} is the store's tablePrefix (default pq_). The tables are those of the
-- PostgreSQL schema (postgres/1-tables.sql explains their columns) but for lane_marks, which
-- only the PostgreSQL functions use. Hot indexes are partial (live rows only), as on PostgreSQL.
-- Writers are serialised by SQLite itself (one writer per database file, BEGIN IMMEDIATE).
CREATE TABLE IF NOT EXISTS {{prefix}}tasks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL,
  queue TEXT NOT NULL,
  idempotency_key TEXT NULL,
  type TEXT NOT NULL,
  payload TEXT NULL,
  priority INTEGER NOT NULL,
  k1 INTEGER NOT NULL,
  k2 INTEGER NOT NULL,
  run_at INTEGER NOT NULL,
  deadline_at INTEGER NULL,
  created_at INTEGER NOT NULL,
  status TEXT NOT NULL,
  staged INTEGER NOT NULL,
  lane_key TEXT NOT NULL,
  provider_key TEXT NOT NULL,
  account_id TEXT NULL,
  tenant_id TEXT NULL,
  concurrency_key TEXT NULL,
  version INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  idempotent INTEGER NOT NULL,
  lease_owner TEXT NULL,
  lease_id TEXT NULL,
  lease_until INTEGER NULL,
  result TEXT NULL,
  error TEXT NULL,
  external_id TEXT NULL,
  next_poll_at INTEGER NULL,
  poll_errors INTEGER NOT NULL,
  cancel_requested INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER NULL,
  history TEXT NULL,
  history_limit INTEGER NOT NULL DEFAULT 0,
  boost_at INTEGER NULL,
  boost_priority INTEGER NULL,
  boost_due INTEGER NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS {{prefix}}tasks_id ON {{prefix}}tasks (id);
CREATE UNIQUE INDEX IF NOT EXISTS {{prefix}}tasks_idem ON {{prefix}}tasks (queue, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_lane ON {{prefix}}tasks (queue, lane_key, k1, k2, run_at, created_at, seq) WHERE status = 'PENDING_SUBMIT' AND staged = 0;
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_staged ON {{prefix}}tasks (queue, run_at) WHERE status = 'PENDING_SUBMIT' AND staged = 1;
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_deadline ON {{prefix}}tasks (queue, deadline_at) WHERE deadline_at IS NOT NULL AND status IN ('PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING');
-- SQLite uses a partial index only when its WHERE terms appear as such in the query: the claim's
-- timeout lookup (status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL) cannot use the index
-- above (status IN (...)) and would walk every pending task.
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_due_deadline ON {{prefix}}tasks (queue, deadline_at) WHERE status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_lease ON {{prefix}}tasks (queue, lease_until) WHERE lease_until IS NOT NULL AND status IN ('SUBMITTING', 'SUBMITTED', 'RUNNING');
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_poll ON {{prefix}}tasks (queue, next_poll_at) WHERE status IN ('SUBMITTED', 'RUNNING');
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_cancel ON {{prefix}}tasks (queue) WHERE cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING');
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_list ON {{prefix}}tasks (queue, status, seq);
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_finished ON {{prefix}}tasks (queue, finished_at) WHERE finished_at IS NOT NULL;
-- The removal trim (removeOnComplete / removeOnFail with a count or an age, sql/complete-removing.ts).
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_trim ON {{prefix}}tasks (queue, type, status, finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS {{prefix}}tasks_boost_due ON {{prefix}}tasks (queue, boost_due) WHERE boost_due IS NOT NULL;

CREATE TABLE IF NOT EXISTS {{prefix}}lanes (
  queue TEXT NOT NULL,
  lane_key TEXT NOT NULL,
  provider_key TEXT NOT NULL,
  account_id TEXT NULL,
  tenant_id TEXT NULL,
  concurrency_key TEXT NULL,
  ready INTEGER NOT NULL,
  h1 INTEGER NULL,
  h2 INTEGER NULL,
  h_run_at INTEGER NULL,
  h_created_at INTEGER NULL,
  h_seq INTEGER NULL,
  h_priority INTEGER NULL,
  parked_on TEXT NULL,
  parked_until INTEGER NULL,
  PRIMARY KEY (queue, lane_key)
);
CREATE INDEX IF NOT EXISTS {{prefix}}lanes_ready ON {{prefix}}lanes (queue, h1, h2, h_run_at, h_created_at, h_seq) WHERE ready = 1;
CREATE INDEX IF NOT EXISTS {{prefix}}lanes_parked ON {{prefix}}lanes (queue, parked_on) WHERE parked_on IS NOT NULL;
CREATE INDEX IF NOT EXISTS {{prefix}}lanes_parked_until ON {{prefix}}lanes (queue, parked_until) WHERE parked_until IS NOT NULL;

CREATE TABLE IF NOT EXISTS {{prefix}}resources (
  queue TEXT NOT NULL,
  rkey TEXT NOT NULL,
  in_use INTEGER NOT NULL,
  tat REAL NOT NULL,
  configured INTEGER NOT NULL,
  limit_value INTEGER NULL,
  paused INTEGER NOT NULL,
  qps REAL NULL,
  burst INTEGER NULL,
  account_concurrency INTEGER NULL,
  PRIMARY KEY (queue, rkey)
);

CREATE TABLE IF NOT EXISTS {{prefix}}releases (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, lane_key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS {{prefix}}releases_queue ON {{prefix}}releases (queue, id);

CREATE TABLE IF NOT EXISTS {{prefix}}queues (queue TEXT PRIMARY KEY, aging_interval_ms INTEGER NOT NULL, fairness TEXT NULL);

-- DESIGN §7 fair share (postgres/1-tables.sql explains them): V[p], F[t,p], tenant weights.
CREATE TABLE IF NOT EXISTS {{prefix}}fair_levels (queue TEXT NOT NULL, priority INTEGER NOT NULL, vtime INTEGER NOT NULL, PRIMARY KEY (queue, priority));
CREATE TABLE IF NOT EXISTS {{prefix}}fair_tags (queue TEXT NOT NULL, tenant_key TEXT NOT NULL, priority INTEGER NOT NULL, finish INTEGER NOT NULL, PRIMARY KEY (queue, tenant_key, priority));
CREATE TABLE IF NOT EXISTS {{prefix}}tenant_weights (queue TEXT NOT NULL, tenant_key TEXT NOT NULL, weight INTEGER NOT NULL, PRIMARY KEY (queue, tenant_key));

-- sweeps: per queue, the sweep lease (sql/sweep-lease.ts): the store time until which the last
-- sweep that found work keeps the queue's other workers from sweeping, and who took it. init()
-- adds the queue's row; written only by its own one-row UPDATE, never inside another transaction.
CREATE TABLE IF NOT EXISTS {{prefix}}sweeps (queue TEXT PRIMARY KEY, lease_until INTEGER NOT NULL, owner TEXT NULL);
