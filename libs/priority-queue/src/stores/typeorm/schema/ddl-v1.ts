import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';

/**
 * Version 1 of the schema, per dialect. Design notes (docs/TYPEORM.md has the long form):
 *
 * - tasks: one row per task. `seq` is the integer primary key (store-wide increasing sequence,
 *   final tie-break); `id` is a unique string. Order columns, all ascending:
 *   (k1, k2, run_at, created_at, seq) with k2 = -priority and k1 = run_at - priority*T under
 *   aging (T = agingIntervalMs), else k1 = -priority. `staged` = 1 while a PENDING_SUBMIT task is
 *   not yet merged into its lane (new, delayed, retried, re-prioritised); the claim merges every
 *   due staged task before it picks anything.
 * - lanes: one row per set of admission keys; the head key of its best merged task; `ready`
 *   = has a head and is not parked; `parked_on` = resource that refused it, `parked_until` =
 *   time of the next rate token.
 * - resources: limits and counters per provider ('p:'), account ('a:'), tenant ('t:'),
 *   default tenant quota ('d:'), concurrency key ('c:'). Written only under the queue lock.
 * - releases: slots freed by finishing tasks (append-only); the next claim applies them to
 *   the counters under the queue lock, so a finishing task never waits for a claim.
 * - queues: per queue settings (the aging interval every index depends on).
 *
 * Hot indexes hold only live rows: partial indexes on PostgreSQL and SQLite; on MySQL, where
 * indexes cannot be partial, they lead with status so terminal rows sit in a range no hot
 * query reads.
 */
export function ddlV1(kind: DialectKind, t: TableNames): string[] {
  switch (kind) {
    case 'postgres':
      return postgres(t);
    case 'mysql':
      return mysql(t);
    case 'sqlite':
      return sqlite(t);
  }
}

const LIVE = `'SUBMITTING', 'SUBMITTED', 'RUNNING'`;
const NON_TERMINAL = `'PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING'`;

function taskColumns(types: { big: string; text: string; str: (n: number) => string; int: string; small: string }): string {
  const { big, text, str, int, small } = types;
  return `
  id ${str(255)} NOT NULL,
  queue ${str(64)} NOT NULL,
  idempotency_key ${str(255)} NULL,
  type ${str(255)} NOT NULL,
  payload ${text} NULL,
  priority ${int} NOT NULL,
  k1 ${big} NOT NULL,
  k2 ${big} NOT NULL,
  run_at ${big} NOT NULL,
  deadline_at ${big} NULL,
  created_at ${big} NOT NULL,
  status ${str(16)} NOT NULL,
  staged ${small} NOT NULL,
  lane_key ${str(64)} NOT NULL,
  provider_key ${str(255)} NOT NULL,
  account_id ${str(255)} NULL,
  tenant_id ${str(255)} NULL,
  concurrency_key ${str(255)} NULL,
  version ${int} NOT NULL,
  attempts ${int} NOT NULL,
  max_attempts ${int} NOT NULL,
  idempotent ${small} NOT NULL,
  lease_owner ${str(255)} NULL,
  lease_id ${str(600)} NULL,
  lease_until ${big} NULL,
  result ${text} NULL,
  error ${text} NULL,
  external_id ${str(1024)} NULL,
  next_poll_at ${big} NULL,
  poll_errors ${int} NOT NULL,
  cancel_requested ${small} NOT NULL,
  updated_at ${big} NOT NULL,
  finished_at ${big} NULL`;
}

function laneColumns(types: { big: string; str: (n: number) => string; int: string; small: string }): string {
  const { big, str, int, small } = types;
  return `
  queue ${str(64)} NOT NULL,
  lane_key ${str(64)} NOT NULL,
  provider_key ${str(255)} NOT NULL,
  account_id ${str(255)} NULL,
  tenant_id ${str(255)} NULL,
  concurrency_key ${str(255)} NULL,
  ready ${small} NOT NULL,
  h1 ${big} NULL,
  h2 ${big} NULL,
  h_run_at ${big} NULL,
  h_created_at ${big} NULL,
  h_seq ${big} NULL,
  h_priority ${int} NULL,
  parked_on ${str(520)} NULL,
  parked_until ${big} NULL`;
}

function resourceColumns(types: { str: (n: number) => string; int: string; small: string; dbl: string }): string {
  const { str, int, small, dbl } = types;
  return `
  queue ${str(64)} NOT NULL,
  rkey ${str(520)} NOT NULL,
  in_use ${int} NOT NULL,
  tat ${dbl} NOT NULL,
  configured ${small} NOT NULL,
  limit_value ${int} NULL,
  paused ${small} NOT NULL,
  qps ${dbl} NULL,
  burst ${int} NULL,
  account_concurrency ${int} NULL`;
}

function postgres(t: TableNames): string[] {
  const ty = { big: 'bigint', text: 'text', str: (n: number) => `varchar(${n})`, int: 'integer', small: 'smallint', dbl: 'double precision' };
  return [
    `CREATE TABLE IF NOT EXISTS ${t.tasks} (seq bigserial PRIMARY KEY,${taskColumns(ty)})`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${t.tasks}_id ON ${t.tasks} (id)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${t.tasks}_idem ON ${t.tasks} (queue, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_lane ON ${t.tasks} (queue, lane_key, k1, k2, run_at, created_at, seq) WHERE status = 'PENDING_SUBMIT' AND staged = 0`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_staged ON ${t.tasks} (queue, run_at) WHERE status = 'PENDING_SUBMIT' AND staged = 1`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_deadline ON ${t.tasks} (queue, deadline_at) WHERE deadline_at IS NOT NULL AND status IN (${NON_TERMINAL})`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_lease ON ${t.tasks} (queue, lease_until) WHERE lease_until IS NOT NULL AND status IN (${LIVE})`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_poll ON ${t.tasks} (queue, next_poll_at) WHERE status IN ('SUBMITTED', 'RUNNING')`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_cancel ON ${t.tasks} (queue) WHERE cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING')`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_list ON ${t.tasks} (queue, status, seq)`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_finished ON ${t.tasks} (queue, finished_at) WHERE finished_at IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${t.lanes} (${laneColumns(ty)}, PRIMARY KEY (queue, lane_key))`,
    `CREATE INDEX IF NOT EXISTS ${t.lanes}_ready ON ${t.lanes} (queue, h1, h2, h_run_at, h_created_at, h_seq) WHERE ready = 1`,
    `CREATE INDEX IF NOT EXISTS ${t.lanes}_parked ON ${t.lanes} (queue, parked_on) WHERE parked_on IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS ${t.lanes}_parked_until ON ${t.lanes} (queue, parked_until) WHERE parked_until IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${t.resources} (${resourceColumns(ty)}, PRIMARY KEY (queue, rkey))`,
    `CREATE TABLE IF NOT EXISTS ${t.releases} (id bigserial PRIMARY KEY, queue varchar(64) NOT NULL, lane_key varchar(64) NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${t.releases}_queue ON ${t.releases} (queue, id)`,
    `CREATE TABLE IF NOT EXISTS ${t.queues} (queue varchar(64) PRIMARY KEY, aging_interval_ms bigint NOT NULL)`,
  ];
}

function mysql(t: TableNames): string[] {
  const ty = { big: 'BIGINT', text: 'LONGTEXT', str: (n: number) => `VARCHAR(${n})`, int: 'INT', small: 'SMALLINT', dbl: 'DOUBLE' };
  // utf8mb4_bin: keys compare byte for byte, like the other stores (no case folding).
  const tail = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
  return [
    `CREATE TABLE IF NOT EXISTS ${t.tasks} (
      seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,${taskColumns(ty)},
      UNIQUE KEY ${t.tasks}_id (id),
      UNIQUE KEY ${t.tasks}_idem (queue, idempotency_key),
      KEY ${t.tasks}_lane (status, staged, queue, lane_key, k1, k2, run_at, created_at),
      KEY ${t.tasks}_staged (status, staged, queue, run_at),
      KEY ${t.tasks}_deadline (status, queue, deadline_at),
      KEY ${t.tasks}_lease (status, queue, lease_until),
      KEY ${t.tasks}_poll (status, queue, next_poll_at),
      KEY ${t.tasks}_cancel (cancel_requested, status, queue),
      KEY ${t.tasks}_list (queue, status, seq),
      KEY ${t.tasks}_finished (queue, finished_at)
    ) ${tail}`,
    `CREATE TABLE IF NOT EXISTS ${t.lanes} (${laneColumns(ty)},
      PRIMARY KEY (queue, lane_key),
      KEY ${t.lanes}_ready (queue, ready, h1, h2, h_run_at, h_created_at, h_seq),
      KEY ${t.lanes}_parked (queue, parked_on),
      KEY ${t.lanes}_parked_until (queue, parked_until)
    ) ${tail}`,
    `CREATE TABLE IF NOT EXISTS ${t.resources} (${resourceColumns(ty)}, PRIMARY KEY (queue, rkey)) ${tail}`,
    `CREATE TABLE IF NOT EXISTS ${t.releases} (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, queue VARCHAR(64) NOT NULL, lane_key VARCHAR(64) NOT NULL,
      KEY ${t.releases}_queue (queue, id)
    ) ${tail}`,
    `CREATE TABLE IF NOT EXISTS ${t.queues} (queue VARCHAR(64) NOT NULL PRIMARY KEY, aging_interval_ms BIGINT NOT NULL) ${tail}`,
  ];
}

function sqlite(t: TableNames): string[] {
  const ty = { big: 'INTEGER', text: 'TEXT', str: () => 'TEXT', int: 'INTEGER', small: 'INTEGER', dbl: 'REAL' };
  return [
    `CREATE TABLE IF NOT EXISTS ${t.tasks} (seq INTEGER PRIMARY KEY AUTOINCREMENT,${taskColumns(ty)})`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${t.tasks}_id ON ${t.tasks} (id)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${t.tasks}_idem ON ${t.tasks} (queue, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_lane ON ${t.tasks} (queue, lane_key, k1, k2, run_at, created_at, seq) WHERE status = 'PENDING_SUBMIT' AND staged = 0`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_staged ON ${t.tasks} (queue, run_at) WHERE status = 'PENDING_SUBMIT' AND staged = 1`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_deadline ON ${t.tasks} (queue, deadline_at) WHERE deadline_at IS NOT NULL AND status IN (${NON_TERMINAL})`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_lease ON ${t.tasks} (queue, lease_until) WHERE lease_until IS NOT NULL AND status IN (${LIVE})`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_poll ON ${t.tasks} (queue, next_poll_at) WHERE status IN ('SUBMITTED', 'RUNNING')`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_cancel ON ${t.tasks} (queue) WHERE cancel_requested = 1 AND status IN ('SUBMITTED', 'RUNNING')`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_list ON ${t.tasks} (queue, status, seq)`,
    `CREATE INDEX IF NOT EXISTS ${t.tasks}_finished ON ${t.tasks} (queue, finished_at) WHERE finished_at IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${t.lanes} (${laneColumns(ty)}, PRIMARY KEY (queue, lane_key))`,
    `CREATE INDEX IF NOT EXISTS ${t.lanes}_ready ON ${t.lanes} (queue, h1, h2, h_run_at, h_created_at, h_seq) WHERE ready = 1`,
    `CREATE INDEX IF NOT EXISTS ${t.lanes}_parked ON ${t.lanes} (queue, parked_on) WHERE parked_on IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS ${t.lanes}_parked_until ON ${t.lanes} (queue, parked_until) WHERE parked_until IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${t.resources} (${resourceColumns(ty)}, PRIMARY KEY (queue, rkey))`,
    `CREATE TABLE IF NOT EXISTS ${t.releases} (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, lane_key TEXT NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${t.releases}_queue ON ${t.releases} (queue, id)`,
    `CREATE TABLE IF NOT EXISTS ${t.queues} (queue TEXT PRIMARY KEY, aging_interval_ms INTEGER NOT NULL)`,
  ];
}
