import { q, type StoreContext } from '../context';
import type { Exec } from '../db';
import { numOrNull } from '../rows';
import { raw, sql } from './sql';
import { usesStageMarks } from './stage-marks';

/**
 * Claim step 7 (only when the batch is not full): the earliest future time a claim could
 * succeed without any other change: the next delayed runAt (MIN over the staged partial
 * index; MySQL: the earliest stage mark) and the next rate token of a parked lane (MIN over the
 * parked_until index), in one statement.
 */
export async function nextWakeAt(x: Exec, c: StoreContext): Promise<number | null> {
  // MySQL: the earliest stage mark stands for the staged range (stage-marks.ts); one statement either way
  const staged = usesStageMarks(c)
    ? sql`SELECT MIN(run_at) FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue}`
    : sql`SELECT MIN(run_at) FROM ${raw(c.t.tasks)} WHERE queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND staged = 1`;
  const [r] = await q<{ a: unknown; b: unknown }>(
    x,
    sql`SELECT (${staged}) AS a,
      (SELECT MIN(parked_until) FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND parked_until IS NOT NULL) AS b`,
  );
  const times = [numOrNull(r?.a), numOrNull(r?.b)].filter((v): v is number => v !== null);
  return times.length ? Math.min(...times) : null;
}
