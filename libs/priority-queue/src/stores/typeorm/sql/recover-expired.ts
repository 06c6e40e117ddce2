import { TaskStatus, type Task, type Transition } from '../../../core/task';
import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { chunks, num, rowToTask, TASK_COLUMNS } from '../rows';
import { notifyArgs } from './limits';
import { keyColumn, keyOf } from './row-key';
import { list, raw, sql, type Sql } from './sql';
import { markStaged } from './stage-marks';

/**
 * recoverExpired: one sweep under the queue lock (so it never races a claim over the same
 * pending rows), rows locked FOR UPDATE:
 * 1. SUBMITTING with an expired lease (partial index (queue, lease_until) of live rows): a
 *    failed attempt (attempts + 1) whatever comes next: idempotent -> PENDING_SUBMIT staged
 *    (runAt kept) or FAILED at maxAttempts, or CANCELED when a cancel was requested;
 *    non-idempotent -> SUBMIT_UNKNOWN. Slots released.
 * 2. SUBMITTED / RUNNING with an expired lease: lease cleared, the poll is retried.
 * 3. non-terminal, deadline passed, no live lease (partial index (queue, deadline_at)):
 *    TIMED_OUT, next_poll_at cleared, slots released when it held them.
 * When it changed anything, PostgreSQL workers of every process are woken (NOTIFY, sent at
 * commit); the caller wakes this process's (sweepExpired / the store).
 */
type Cond = ReturnType<typeof sql>;

/** What the sweep recovers, at store time `now` (a value, or the statement's clock). */
const lostSubmits = (now: unknown): Cond => sql`status = 'SUBMITTING' AND lease_until IS NOT NULL AND lease_until <= ${now}`;
const lostPolls = (now: unknown): Cond => sql`status IN ('SUBMITTED', 'RUNNING') AND lease_until IS NOT NULL AND lease_until <= ${now}`;
const pastDeadline = (now: unknown): Cond =>
  sql`deadline_at IS NOT NULL AND deadline_at <= ${now} AND status IN ('PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING')
    AND (lease_until IS NULL OR lease_until <= ${now})`;

export async function recoverExpired(c: StoreContext, limit: number): Promise<{ out: Transition[]; changed: boolean }> {
  if (limit <= 0 || !(await anythingExpired(c))) return { out: [], changed: false };
  return recoverNow(c, limit);
}

/** The sweep's transaction (sweepExpired calls it once it holds the sweep lease). */
export function recoverNow(c: StoreContext, limit: number): Promise<{ out: Transition[]; changed: boolean }> {
  return c.db.tx(
    async (x) => {
      const now = await c.now(x);
      const out: Transition[] = [];
      const lock = c.d.rowLocks ? ' FOR UPDATE' : '';
      const T = raw(c.t.tasks);
      const select = (where: Cond, n: number) =>
        q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE queue = ${c.queue} AND ${where} LIMIT ${raw(String(n))}${raw(lock)}`);

      // 1. expired submit leases
      const submitting = await select(lostSubmits(now), limit);
      const groups = new Map<TaskStatus, Row[]>();
      for (const r of submitting) {
        const to = afterLostSubmit(r);
        groups.set(to, [...(groups.get(to) ?? []), r]);
      }
      for (const [to, rows] of groups) {
        const keys = rows.map((r) => keyOf(c, r));
        const terminal = to !== TaskStatus.PENDING_SUBMIT;
        await run(
          x,
          sql`UPDATE ${T} SET status = ${to}, attempts = attempts + 1, staged = 1, lease_owner = NULL, lease_id = NULL,
              lease_until = NULL, version = version + 1, updated_at = ${now}, finished_at = ${terminal ? now : null},
              error = ${to === TaskStatus.CANCELED ? 'canceled' : 'submit lease expired'}
            WHERE ${keyColumn(c)} IN (${list(keys)})`,
        );
        await release(x, c, rows);
        if (to === TaskStatus.PENDING_SUBMIT) await markStaged(x, c, Math.min(...rows.map((r) => num(r.run_at))));
        for (const r of rows) out.push({ from: TaskStatus.SUBMITTING, to, task: await reread(x, c, r) });
      }

      // 2. expired poll leases
      const left = limit - out.length;
      let polls: Row[] = [];
      if (left > 0) {
        polls = await select(lostPolls(now), left);
        for (const part of chunks(polls.map((r) => keyOf(c, r)), 500)) {
          await run(
            x,
            sql`UPDATE ${T} SET lease_owner = NULL, lease_id = NULL, lease_until = NULL, version = version + 1, updated_at = ${now}
              WHERE ${keyColumn(c)} IN (${list(part)})`,
          );
        }
      }

      // 3. deadlines
      const left3 = limit - out.length;
      if (left3 > 0) {
        const late = await select(pastDeadline(now), left3);
        if (late.length > 0) {
          for (const part of chunks(late.map((r) => keyOf(c, r)), 500)) {
            await run(
              x,
              sql`UPDATE ${T} SET status = 'TIMED_OUT', lease_owner = NULL, lease_id = NULL, lease_until = NULL, next_poll_at = NULL,
                  version = version + 1, updated_at = ${now}, finished_at = ${now}, error = 'deadline passed'
                WHERE ${keyColumn(c)} IN (${list(part)})`,
            );
          }
          await release(x, c, late.filter((r) => String(r.status) !== TaskStatus.PENDING_SUBMIT));
          for (const r of late) out.push({ from: String(r.status) as TaskStatus, to: TaskStatus.TIMED_OUT, task: await reread(x, c, r) });
        }
      }
      const changed = out.length > 0 || polls.length > 0;
      if (changed && c.d.kind === 'postgres') await x.rows(...notifyArgs(c));
      return { out, changed };
    },
    { queueLock: true },
  );
}

/**
 * Whether the sweep has anything to do: one statement, no lock, no transaction (the same three
 * conditions as the sweep, on the same indexes). Most sweeps find nothing; they then take neither
 * the queue lock nor any row lock, so they never wait for (or deadlock with) claims, creates and
 * completes. Anything that expires after this read is found by the next sweep.
 */
async function anythingExpired(c: StoreContext): Promise<boolean> {
  const [r] = await q<{ a: unknown; b: unknown; d: unknown }>(c.db, sql`SELECT ${expiredColumns(c)}`);
  return r !== undefined && anyExpired(r);
}

/** `a`, `b`, `d`: whether anything is due for each step of the sweep, at the statement's store time. */
export function expiredColumns(c: StoreContext): Sql {
  const T = raw(c.t.tasks);
  const now = c.nowSql();
  const any = (cond: Cond) => sql`EXISTS (SELECT 1 FROM ${T} WHERE queue = ${c.queue} AND ${cond})`;
  return sql`${any(lostSubmits(now))} AS a, ${any(lostPolls(now))} AS b, ${any(pastDeadline(now))} AS d`;
}

/** Reads the row of expiredColumns(). */
export function anyExpired(r: { a: unknown; b: unknown; d: unknown }): boolean {
  return isTrue(r.a) || isTrue(r.b) || isTrue(r.d);
}

export function isTrue(v: unknown): boolean {
  return v === true || Number(v) === 1;
}

function afterLostSubmit(r: Row): TaskStatus {
  if (num(r.idempotent) !== 1) return TaskStatus.SUBMIT_UNKNOWN;
  if (num(r.cancel_requested) === 1) return TaskStatus.CANCELED;
  if (num(r.attempts) + 1 >= num(r.max_attempts)) return TaskStatus.FAILED;
  return TaskStatus.PENDING_SUBMIT;
}

async function release(x: Exec, c: StoreContext, rows: readonly Row[]): Promise<void> {
  for (const part of chunks(rows, 500)) {
    if (part.length === 0) continue;
    const values = part.map((r) => sql`(${c.queue}, ${String(r.lane_key)})`);
    await run(x, sql`INSERT INTO ${raw(c.t.releases)} (queue, lane_key) VALUES ${joinSql(values)}`);
  }
}

function joinSql(parts: ReturnType<typeof sql>[]) {
  return parts.reduce((acc, p, i) => (i === 0 ? p : sql`${acc}, ${p}`));
}

async function reread(x: Exec, c: StoreContext, r: Row): Promise<Task> {
  const [row] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${raw(c.t.tasks)} WHERE ${keyColumn(c)} = ${keyOf(c, r)}`);
  return rowToTask(row, c.fair);
}
