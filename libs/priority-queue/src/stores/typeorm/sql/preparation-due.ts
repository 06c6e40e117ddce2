import { q, type StoreContext } from '../context';
import type { Exec } from '../db';
import { num } from '../rows';
import { raw, sql } from './sql';

export interface PreparationDue {
  timeouts: boolean;
  releases: boolean;
  rate: boolean;
  staged: boolean;
  /** DESIGN §7: unfired deadline boosts due (sql/apply-boosts.ts). */
  boosts: boolean;
}

const ALL: PreparationDue = { timeouts: true, releases: true, rate: true, staged: true, boosts: true };

/**
 * Claim steps 1-4 usually find nothing. On MySQL / MariaDB (a round trip per statement) ONE
 * plain read says which of them have work at `now` (due deadlines, release rows, due rate
 * tokens, due stage marks); the others are skipped. Each probe reads the same index as its
 * step. A row committed after the probe is handled by the next claim, as a row committed
 * after the step itself would be. PostgreSQL runs the steps server-side; SQLite has no round
 * trips: both run every step.
 */
export async function preparationDue(x: Exec, c: StoreContext, now: number): Promise<PreparationDue> {
  if (c.d.kind !== 'mysql') return ALL;
  const [r] = await q(
    x,
    sql`SELECT
      EXISTS (SELECT 1 FROM ${raw(c.t.tasks)} WHERE status = 'PENDING_SUBMIT' AND queue = ${c.queue}
        AND deadline_at IS NOT NULL AND deadline_at <= ${now} AND run_at <= ${now}) AS timeouts,
      EXISTS (SELECT 1 FROM ${raw(c.t.releases)} WHERE queue = ${c.queue}) AS releases,
      EXISTS (SELECT 1 FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND parked_until IS NOT NULL AND parked_until <= ${now}) AS rate,
      EXISTS (SELECT 1 FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue} AND run_at <= ${now}) AS staged,
      EXISTS (SELECT 1 FROM ${raw(c.t.tasks)} WHERE queue = ${c.queue} AND boost_due IS NOT NULL AND boost_due <= ${now}) AS boosts`,
  );
  return {
    timeouts: num(r.timeouts) === 1,
    releases: num(r.releases) === 1,
    rate: num(r.rate) === 1,
    staged: num(r.staged) === 1,
    boosts: num(r.boosts) === 1,
  };
}
