import { q, type StoreContext } from '../context';
import type { Exec } from '../db';
import { numOrNull } from '../rows';
import { raw, sql } from './sql';
import { earliestMark, usesStageMarks } from './stage-marks';

/**
 * Claim step 7 (only when the batch is not full): the earliest future time a claim could
 * succeed without any other change: the next delayed runAt (MIN over the staged partial
 * index) and the next rate token of a parked lane (MIN over the parked_until index).
 */
export async function nextWakeAt(x: Exec, c: StoreContext): Promise<number | null> {
  if (usesStageMarks(c)) {
    const [r] = await q<{ b: unknown }>(
      x,
      sql`SELECT MIN(parked_until) AS b FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND parked_until IS NOT NULL`,
    );
    const times = [await earliestMark(x, c), numOrNull(r?.b)].filter((v): v is number => v !== null);
    return times.length ? Math.min(...times) : null;
  }
  const [r] = await q<{ a: unknown; b: unknown }>(
    x,
    sql`SELECT (SELECT MIN(run_at) FROM ${raw(c.t.tasks)} WHERE queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND staged = 1) AS a,
      (SELECT MIN(parked_until) FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND parked_until IS NOT NULL) AS b`,
  );
  const times = [numOrNull(r?.a), numOrNull(r?.b)].filter((v): v is number => v !== null);
  return times.length ? Math.min(...times) : null;
}
