-- Schema version 1, MySQL / MariaDB: tables and indexes (migrations.ts runs this file first, then
-- the trigger). {{prefix}} is the store's tablePrefix (default pq_). The tables are those of the
-- PostgreSQL schema (postgres/1-tables.sql explains their columns) but for lane_marks, which
-- only the PostgreSQL functions use, and stage_marks below.
--
-- utf8mb4_bin: keys compare byte for byte, like the other stores (no case folding).
-- Indexes cannot be partial here: the hot ones lead with status, so terminal rows sit in a
-- range no hot query reads. MySQL commits every DDL statement on its own: each one is
-- idempotent (IF NOT EXISTS / DROP ... IF EXISTS), so a migration cut in the middle is run
-- again from its start.
CREATE TABLE IF NOT EXISTS {{prefix}}tasks (
  seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id VARCHAR(255) NOT NULL,
  queue VARCHAR(64) NOT NULL,
  idempotency_key VARCHAR(255) NULL,
  type VARCHAR(255) NOT NULL,
  payload LONGTEXT NULL,
  priority INT NOT NULL,
  k1 BIGINT NOT NULL,
  k2 BIGINT NOT NULL,
  run_at BIGINT NOT NULL,
  deadline_at BIGINT NULL,
  created_at BIGINT NOT NULL,
  status VARCHAR(16) NOT NULL,
  staged SMALLINT NOT NULL,
  lane_key VARCHAR(64) NOT NULL,
  provider_key VARCHAR(255) NOT NULL,
  account_id VARCHAR(255) NULL,
  tenant_id VARCHAR(255) NULL,
  concurrency_key VARCHAR(255) NULL,
  version INT NOT NULL,
  attempts INT NOT NULL,
  max_attempts INT NOT NULL,
  idempotent SMALLINT NOT NULL,
  lease_owner VARCHAR(255) NULL,
  lease_id VARCHAR(600) NULL,
  lease_until BIGINT NULL,
  result LONGTEXT NULL,
  error LONGTEXT NULL,
  external_id VARCHAR(1024) NULL,
  next_poll_at BIGINT NULL,
  poll_errors INT NOT NULL,
  cancel_requested SMALLINT NOT NULL,
  updated_at BIGINT NOT NULL,
  finished_at BIGINT NULL,
  history LONGTEXT NULL,
  history_limit SMALLINT NOT NULL DEFAULT 0,
  boost_at BIGINT NULL,
  boost_priority INT NULL,
  boost_due BIGINT NULL,
  UNIQUE KEY {{prefix}}tasks_id (id),
  UNIQUE KEY {{prefix}}tasks_idem (queue, idempotency_key),
  KEY {{prefix}}tasks_lane (status, staged, queue, lane_key, k1, k2, run_at, created_at),
  KEY {{prefix}}tasks_staged (status, staged, queue, run_at),
  KEY {{prefix}}tasks_deadline (status, queue, deadline_at),
  KEY {{prefix}}tasks_lease (status, queue, lease_until),
  KEY {{prefix}}tasks_poll (status, queue, next_poll_at),
  KEY {{prefix}}tasks_cancel (cancel_requested, status, queue),
  KEY {{prefix}}tasks_list (queue, status, seq),
  KEY {{prefix}}tasks_trim (queue, type, status, finished_at),
  KEY {{prefix}}tasks_finished (queue, finished_at),
  KEY {{prefix}}tasks_boost_due (queue, boost_due)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}lanes (
  queue VARCHAR(64) NOT NULL,
  lane_key VARCHAR(64) NOT NULL,
  provider_key VARCHAR(255) NOT NULL,
  account_id VARCHAR(255) NULL,
  tenant_id VARCHAR(255) NULL,
  concurrency_key VARCHAR(255) NULL,
  ready SMALLINT NOT NULL,
  h1 BIGINT NULL,
  h2 BIGINT NULL,
  h_run_at BIGINT NULL,
  h_created_at BIGINT NULL,
  h_seq BIGINT NULL,
  h_priority INT NULL,
  parked_on VARCHAR(520) NULL,
  parked_until BIGINT NULL,
  PRIMARY KEY (queue, lane_key),
  KEY {{prefix}}lanes_ready (queue, ready, h1, h2, h_run_at, h_created_at, h_seq),
  KEY {{prefix}}lanes_parked (queue, parked_on),
  KEY {{prefix}}lanes_parked_until (queue, parked_until)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}resources (
  queue VARCHAR(64) NOT NULL,
  rkey VARCHAR(520) NOT NULL,
  in_use INT NOT NULL,
  tat DOUBLE NOT NULL,
  configured SMALLINT NOT NULL,
  limit_value INT NULL,
  paused SMALLINT NOT NULL,
  qps DOUBLE NULL,
  burst INT NULL,
  account_concurrency INT NULL,
  PRIMARY KEY (queue, rkey)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}releases (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  queue VARCHAR(64) NOT NULL,
  lane_key VARCHAR(64) NOT NULL,
  KEY {{prefix}}releases_queue (queue, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- stage marks (sql/stage-marks.ts): a claim reads the staged range of the tasks only when a
-- mark is due, instead of probing it on every claim.
CREATE TABLE IF NOT EXISTS {{prefix}}stage_marks (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  queue VARCHAR(64) NOT NULL,
  run_at BIGINT NOT NULL,
  KEY {{prefix}}stage_marks_due (queue, run_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}queues (
  queue VARCHAR(64) NOT NULL PRIMARY KEY,
  aging_interval_ms BIGINT NOT NULL,
  fairness VARCHAR(16) NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- sweeps: per queue, the sweep lease (sql/sweep-lease.ts): the store time until which the last
-- sweep that found work keeps the queue's other workers from sweeping, and who took it. init()
-- adds the queue's row; written only by its own one-row UPDATE, never inside another transaction.
CREATE TABLE IF NOT EXISTS {{prefix}}sweeps (
  queue VARCHAR(64) NOT NULL PRIMARY KEY,
  lease_until BIGINT NOT NULL,
  owner VARCHAR(255) NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- DESIGN §7 fair share (postgres/1-tables.sql explains them): V[p], F[t,p], tenant weights.
-- tenant_key gets the NO PAD binary collation in 1-key-collation.sql like the other key columns.
CREATE TABLE IF NOT EXISTS {{prefix}}fair_levels (
  queue VARCHAR(64) NOT NULL,
  priority INT NOT NULL,
  vtime BIGINT NOT NULL,
  PRIMARY KEY (queue, priority)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}fair_tags (
  queue VARCHAR(64) NOT NULL,
  tenant_key VARCHAR(255) NOT NULL,
  priority INT NOT NULL,
  finish BIGINT NOT NULL,
  PRIMARY KEY (queue, tenant_key, priority)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}tenant_weights (
  queue VARCHAR(64) NOT NULL,
  tenant_key VARCHAR(255) NOT NULL,
  weight INT NOT NULL,
  PRIMARY KEY (queue, tenant_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
