import { run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { raw, sql } from './sql';

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
 * spent and marks what stays staged (all of it not yet due) with its earliest run_at.
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

/**
 * Spends the due marks before the merge: deletes them and says how many there were (0: no staged
 * task is due, skip the merge). Each mark was committed with its tasks, so every task whose mark
 * this deletes is visible to the merge's locking read that follows; a mark committed after this
 * DELETE stays for the next claim. One statement (was a read of the ids, then their DELETE after
 * the merge).
 */
export function spendDueMarks(x: Exec, c: StoreContext, now: number): Promise<number> {
  return run(x, sql`DELETE FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue} AND run_at <= ${now}`);
}

/**
 * After a merge: what stays staged (none of it due) gets one mark at its earliest run_at, read
 * and written in one statement (READ COMMITTED: the INSERT ... SELECT reads the tasks as a
 * consistent read, without locks).
 */
export async function remarkStaged(x: Exec, c: StoreContext): Promise<void> {
  await run(
    x,
    sql`INSERT INTO ${raw(c.t.stageMarks)} (queue, run_at)
      SELECT ${c.queue}, MIN(run_at) FROM ${raw(c.t.tasks)} WHERE status = 'PENDING_SUBMIT' AND staged = 1 AND queue = ${c.queue}
      HAVING MIN(run_at) IS NOT NULL`,
  );
}
