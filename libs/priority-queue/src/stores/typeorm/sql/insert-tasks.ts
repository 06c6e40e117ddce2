import { boostAtOf } from '../../../core/boost';
import type { NewTask } from '../../../core/task';
import { q, run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { orderColumns } from '../order-columns';
import { chunks, laneId, toJson } from '../rows';
import { tagTasks } from './fair-tags';
import { join, list, raw, sql, type Sql } from './sql';

/**
 * create(): the batch goes in with multi-row INSERTs inside the caller's transaction (all or
 * none). Rows are `staged = 1`, so creating never touches a lane row and never waits for the
 * queue lock: the next claim merges every due staged row into its lane.
 *
 * Locks: only the new rows. Two concurrent creates with the same idempotency key collide on the
 * unique index (queue, idempotency_key): the loser's transaction fails and the store retries it,
 * then finds the winner's task (and compares its type, tenant and payload: core/idempotency.ts).
 * With fairness the batch is tagged first, in input order (sql/fair-tags.ts: the F rows of its
 * tenants and levels are locked until the commit); a boost is kept as boost_at / boost_priority
 * and boost_due (unfired) for the claims to fire (sql/apply-boosts.ts).
 */
const COLUMNS = [
  'id', 'queue', 'idempotency_key', 'type', 'payload', 'priority', 'k1', 'k2', 'run_at', 'deadline_at', 'created_at',
  'status', 'staged', 'lane_key', 'provider_key', 'account_id', 'tenant_id', 'concurrency_key', 'version', 'attempts',
  'max_attempts', 'idempotent', 'lease_owner', 'lease_id', 'lease_until', 'result', 'error', 'external_id',
  'next_poll_at', 'poll_errors', 'cancel_requested', 'updated_at', 'finished_at', 'history_limit',
  'boost_at', 'boost_priority', 'boost_due',
];

/** What a create wrote that the task record needs: its seq and, with fairness, its fair tag. */
export interface Inserted {
  seq: number;
  fairTag: string | null;
}

/**
 * MariaDB 10.5+ (TypeORM type "mariadb", which reads the server version when it connects):
 * `INSERT ... RETURNING`. Used only by the small creates that take the server clock
 * (createsWithServerClock): a bulk chunk of 1,000 reads its seqs back instead, measured faster
 * (20 x 1,000 rows through submitMany on MariaDB 10.11, three alternations: client CPU 23-31
 * µs per task against 27-36 with RETURNING, jobs/s 14-16k against 14.6-14.8k).
 */
function insertReturning(c: StoreContext): boolean {
  if (c.d.kind !== 'mysql') return false;
  const driver = c.db.dataSource.driver as { isReturningSqlSupported?: (kind: 'insert') => boolean };
  return driver.isReturningSqlSupported?.('insert') === true;
}

/** Rows per INSERT statement (the dialect's parameter limit over the columns). */
function rowsPerStatement(c: StoreContext): number {
  return Math.floor((c.d.kind === 'sqlite' ? 30_000 : 60_000) / COLUMNS.length);
}

/**
 * MariaDB: a create may let its INSERT take the server clock itself (created_at, run_at,
 * deadline_at, updated_at as `now + offset` in SQL) and return it, instead of reading the clock
 * first: one round trip less per submit. Only where nothing else needs the time before the
 * INSERT: no injected clock, no fairness (the tags), no deadline boost, an order key whose k1 /
 * k2 do not hold runAt (no aging), and a small batch (one statement, one NOW(); a bulk create
 * pays its clock read once per 1,000 tasks, while four clock expressions per row lengthen its
 * INSERT: measured slower for 1,000-row chunks).
 */
const SERVER_CLOCK_MAX = 16;

export function createsWithServerClock(c: StoreContext, tasks: readonly NewTask[]): boolean {
  if (c.clock || c.fair || !insertReturning(c) || tasks.length === 0 || tasks.length > SERVER_CLOCK_MAX) return false;
  const at = (runAt: number) => orderColumns({ priority: 0, runAt }, c.aging, false);
  if (at(0).k1 !== at(1).k1 || at(0).k2 !== at(1).k2) return false;
  return tasks.every((t) => t.boost == null);
}

/**
 * `now`: the store time of the create; null when createsWithServerClock() said the INSERT takes
 * it (the time written is then returned as `now`).
 */
export async function insertTasks(x: Exec, c: StoreContext, now: number | null, tasks: readonly NewTask[]): Promise<{ now: number | null; rows: Map<string, Inserted> }> {
  const out = new Map<string, Inserted>();
  const tags = c.fair ? await tagTasks(x, c, tasks) : null;
  const tagOf = new Map<NewTask, string>(tags ? tasks.map((t, i) => [t, tags[i].toString()]) : []);
  const seqs = new Map<string, number>();
  // the time: a number, or the server clock of the statement (one value per statement: NOW(3))
  const clock = now === null ? raw(c.d.nowMs) : null;
  for (const part of chunks(tasks, rowsPerStatement(c))) {
    const insert = insertSql(c, part, now, clock, tagOf);
    if (c.d.returning || clock) {
      const got = await q<{ id: string; seq: unknown; created_at: unknown }>(x, sql`${insert} RETURNING id, seq, created_at`);
      for (const r of got) seqs.set(String(r.id), Number(r.seq));
      if (clock && got.length > 0) now = Number(got[0].created_at);
    } else {
      // one row: its seq is the LAST_INSERT_ID of the OK packet (no read back); a multi-row
      // INSERT's ids need not be consecutive (innodb_autoinc_lock_mode = 2, auto_increment_increment)
      const one = part.length === 1 ? await x.insertId(insert.text, insert.params) : (await run(x, insert), null);
      if (one !== null) {
        seqs.set(part[0].id, one);
        continue;
      }
      const got = await q<{ id: string; seq: unknown }>(x, sql`SELECT id, seq FROM ${raw(c.t.tasks)} WHERE id IN (${list(part.map((n) => n.id))})`);
      for (const r of got) seqs.set(String(r.id), Number(r.seq));
    }
  }
  for (const t of tasks) out.set(t.id, { seq: seqs.get(t.id)!, fairTag: tagOf.get(t) ?? null });
  return { now, rows: out };
}

/** The INSERT of `part`: times from `now`, or from the SQL clock fragment `clock` (createsWithServerClock). */
function insertSql(c: StoreContext, part: readonly NewTask[], now: number | null, clock: ReturnType<typeof raw> | null, tagOf: ReadonlyMap<NewTask, string>): Sql {
  const at = (offset: number): unknown => (clock ? sql`${clock} + ${offset}` : now! + offset);
  const values: Sql[] = part.map((n) => {
    const fairTag = tagOf.get(n);
    // with the server clock the order key holds no time (createsWithServerClock)
    const { k1, k2 } = orderColumns({ priority: n.priority, runAt: (now ?? 0) + n.delayMs, fairTag }, c.aging, c.fair);
    const boostAt = n.boost != null && n.timeoutMs !== null && now !== null ? boostAtOf(now + n.timeoutMs, n.boost.beforeDeadlineMs) : null;
    const values = [
      n.id, c.queue, n.idempotencyKey, n.type, toJson(n.payload), n.priority, c.big(k1), c.big(k2), at(n.delayMs),
      n.timeoutMs === null ? null : at(n.timeoutMs), at(0), 'PENDING_SUBMIT', 1, laneId(n), n.providerKey,
      n.accountId, n.tenantId, n.concurrencyKey, 1, 0, n.maxAttempts, n.idempotent ? 1 : 0, null, null, null,
      null, null, null, null, 0, 0, at(0), null, c.historyLimit,
      boostAt, boostAt === null ? null : n.boost!.priority, boostAt,
    ];
    return sql`(${list(values)})`;
  });
  return sql`INSERT INTO ${raw(c.t.tasks)} (${raw(COLUMNS.join(', '))}) VALUES ${join(values, ', ')}`;
}

/**
 * MariaDB: a small create without idempotency keys (createsWithServerClock) as ONE round trip
 * (db.ts oneShot: START TRANSACTION, these, COMMIT in one compound statement): the server
 * clock read once into a session variable, the INSERT taking its times from it and returning
 * each row's seq, and the batch's stage mark at its earliest run_at (sql/stage-marks.ts), in
 * the same transaction as before (was BEGIN, INSERT, mark, COMMIT: four round trips).
 * The INSERT's answer (the first result set) is read by createdOneShot.
 */
export function oneShotCreate(c: StoreContext, tasks: readonly NewTask[]): Sql[] {
  const clock = raw('@pq_now');
  return [
    sql`SET @pq_now = ${raw(c.d.nowMs)}`,
    sql`${insertSql(c, tasks, null, clock, new Map())} RETURNING id, seq, created_at`,
    sql`INSERT INTO ${raw(c.t.stageMarks)} (queue, run_at) VALUES (${c.queue}, @pq_now + ${Math.min(...tasks.map((t) => t.delayMs))})`,
  ];
}

/** The seqs and the time of a oneShotCreate from its INSERT's rows. */
export function createdOneShot(rows: ReadonlyArray<Record<string, unknown>>): { now: number; rows: Map<string, Inserted> } {
  const out = new Map<string, Inserted>();
  for (const r of rows) out.set(String(r.id), { seq: Number(r.seq), fairTag: null });
  return { now: Number(rows[0].created_at), rows: out };
}
