import { q, run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { numOrNull } from '../rows';
import { list, raw, sql } from './sql';

/**
 * MySQL / MariaDB only: `<prefix>stage_marks`, a small table that says "staged
 * tasks may be due from run_at on". InnoDB keeps an index entry of every merged task
 * (delete-marked until purge) in the staged key range, so the staged lookup walked every task
 * merged recently: 0.4 -> 11 ms per claim at 100,000 pending. With the marks a claim reads the
 * staged range only when a mark is due.
 *
 * Invariant: every staged task has a mark of its queue with mark.run_at <= task.run_at,
 * written in the same transaction that staged it (create: one mark per batch; retry,
 * recovery, changePriority: one per statement). A claim that merges deletes the due marks it
 * read and marks what stays staged (all of it not yet due) with its earliest run_at.
 * PostgreSQL and SQLite read their partial staged index directly (nothing dead in it for
 * long) and write no marks.
 */
export function usesStageMarks(c: StoreContext): boolean {
  return c.d.kind === 'mysql';
}

export async function markStaged(x: Exec, c: StoreContext, runAt: number | null): Promise<void> {
  if (!usesStageMarks(c) || runAt === null) return;
  await run(x, sql`INSERT INTO ${raw(c.t.stageMarks)} (queue, run_at) VALUES (${c.queue}, ${runAt})`);
}

/** Ids of the due marks; an empty list means no staged task is due (skip the merge). */
export async function dueMarks(x: Exec, c: StoreContext, now: number): Promise<unknown[]> {
  const rows = await q<{ id: unknown }>(x, sql`SELECT id FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue} AND run_at <= ${now}`);
  return rows.map((r) => r.id);
}

/** After a merge: the marks read are spent; what stays staged gets one mark. */
export async function spendMarks(x: Exec, c: StoreContext, ids: readonly unknown[]): Promise<void> {
  if (ids.length === 0) return;
  await run(x, sql`DELETE FROM ${raw(c.t.stageMarks)} WHERE id IN (${list(ids)})`);
  const [r] = await q<{ m: unknown }>(
    x,
    sql`SELECT MIN(run_at) AS m FROM ${raw(c.t.tasks)} WHERE status = 'PENDING_SUBMIT' AND staged = 1 AND queue = ${c.queue}`,
  );
  await markStaged(x, c, numOrNull(r?.m));
}

/** Earliest mark: the next time a staged task may be due (the wake-up hint). */
export async function earliestMark(x: Exec, c: StoreContext): Promise<number | null> {
  const [r] = await q<{ m: unknown }>(x, sql`SELECT MIN(run_at) AS m FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue}`);
  return numOrNull(r?.m);
}
