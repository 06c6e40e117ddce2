import { type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { raw, sql } from './sql';
import { updateReturning } from './update-returning';

/**
 * Claim step 1: every DUE candidate (PENDING_SUBMIT, runAt <= now) whose deadline has passed
 * becomes TIMED_OUT without admission and without a rate token. Reads the partial index
 * (queue, deadline_at) of live rows, so only expired rows are visited.
 *
 * Locks: runs under the queue lock; the rows are locked FOR UPDATE (a concurrent cancel or
 * changePriority of the same row waits for the claim, then sees its new status).
 */
export function timeOutDueCandidates(x: Exec, c: StoreContext, now: number): Promise<Row[]> {
  return updateReturning(x, c, {
    where: sql`status = 'PENDING_SUBMIT' AND deadline_at IS NOT NULL AND deadline_at <= ${now} AND run_at <= ${now}`,
    set: sql`status = 'TIMED_OUT', staged = 0, version = version + 1, updated_at = ${now}, finished_at = ${now},
      error = ${raw("'deadline passed before submit'")}`,
  });
}
