import { q, type StoreContext } from '../context';
import type { Exec } from '../db';
import { num, numOrNull } from '../rows';
import { raw, sql, type Sql } from './sql';

export interface PreparationDue {
  timeouts: boolean;
  releases: boolean;
  rate: boolean;
  staged: boolean;
  /** DESIGN §7: unfired deadline boosts due (sql/apply-boosts.ts). */
  boosts: boolean;
  /**
   * A stored lane is ready (sql/lanes.ts readyLanes would find one). Lanes are written only
   * under the queue lock, so after the probe only this claim's own steps (releases, rate
   * tokens) can make one ready: without those, the claim's first page is read from memory
   * (claim-submissions.ts), one round trip less, the latency path's case (an idle queue: every
   * lane emptied or parked).
   */
  ready: boolean;
  /**
   * MySQL: what the claim's next-wake time starts from (claim-submissions.ts claimWakeAt), read
   * by the same statement: the earliest stage mark after `now` (a due one is spent by this claim)
   * and the earliest rate token of a parked lane after `now` (a due one is unparked by it).
   * Only claims delete marks and write lanes, under the queue lock the claim holds, so both
   * stand until its COMMIT; what the claim adds (a mark, a lane it parks) it knows itself.
   */
  later?: { mark: number | null; parked: number | null };
}

const ALL: PreparationDue = { timeouts: true, releases: true, rate: true, staged: true, boosts: true, ready: true };

/**
 * Claim steps 1-4 usually find nothing. On MySQL / MariaDB (a round trip per statement) ONE
 * plain read says which of them have work at `now` (due deadlines, release rows, due rate
 * tokens, due stage marks); the others are skipped. The same read says whether a stored lane is
 * ready and what the next-wake time starts from (below). Each probe reads the same index as its
 * step. A row committed after the probe is handled by the next claim, as a row committed
 * after the step itself would be. PostgreSQL runs the steps server-side; SQLite has no round
 * trips: both run every step.
 */
export async function preparationDue(x: Exec, c: StoreContext, now: number): Promise<PreparationDue> {
  if (c.d.kind !== 'mysql') return ALL;
  if (x.begun?.length) return probeOf(x.begun[0]); // read as the transaction began (probeAtBegin)
  const [r] = await q(x, probeSql(c, sql`${now}`));
  return probeOf(r);
}

/**
 * MariaDB (batches, db.ts): the probe as the claim transaction's TxOptions.begin, in the round
 * trip that takes the queue lock, after it: its `now` is the session variable the lock's
 * statement set with the clock it read (typeorm-task-store.ts rowLock), so it is the claim's
 * `now`, and the probe, a statement of its own, reads what committed before the lock was
 * granted. Not with an injected clock (its `now` is not the server's), nor when the claim's
 * transaction writes before it (completeAndClaim's completes: the probe must see their
 * releases). Empty: probe after the lock, as a statement of its own.
 */
export function probeAtBegin(c: StoreContext, writesFirst: boolean): { begin?: Sql; endIf?: Sql } {
  if (c.d.kind !== 'mysql' || !c.db.batching || c.clock || writesFirst) return {};
  // nothing to do (nothing due to prepare, no stored lane ready): the block commits at once
  // (TxOptions.endIf) and the claim returns: an idle claim is one round trip. The verdict is
  // the probe's own, kept in @pq_idle: an IF that read the tables itself would read them with
  // shared locks (a stored program's condition), and deadlock with a finishing task's complete.
  const probe = probeSql(c, sql`${raw('@pq_now')}`);
  return {
    begin: sql`SELECT p.*, @pq_idle := (p.timeouts + p.releases + p.rate + p.staged + p.boosts + p.ready = 0) AS pq_idle FROM (${probe}) p`,
    endIf: sql`@pq_idle = 1`,
  };
}

function probeSql(c: StoreContext, now: Sql): Sql {
  return sql`SELECT
      EXISTS (SELECT 1 FROM ${raw(c.t.tasks)} WHERE status = 'PENDING_SUBMIT' AND queue = ${c.queue}
        AND deadline_at IS NOT NULL AND deadline_at <= ${now} AND run_at <= ${now}) AS timeouts,
      EXISTS (SELECT 1 FROM ${raw(c.t.releases)} WHERE queue = ${c.queue}) AS releases,
      EXISTS (SELECT 1 FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND parked_until IS NOT NULL AND parked_until <= ${now}) AS rate,
      EXISTS (SELECT 1 FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue} AND run_at <= ${now}) AS staged,
      EXISTS (SELECT 1 FROM ${raw(c.t.tasks)} WHERE queue = ${c.queue} AND boost_due IS NOT NULL AND boost_due <= ${now}) AS boosts,
      EXISTS (SELECT 1 FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND ready = 1) AS ready,
      (SELECT MIN(run_at) FROM ${raw(c.t.stageMarks)} WHERE queue = ${c.queue} AND run_at > ${now}) AS next_mark,
      (SELECT MIN(parked_until) FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND parked_until > ${now}) AS next_parked`;
}

function probeOf(r: Record<string, unknown>): PreparationDue {
  return {
    timeouts: num(r.timeouts) === 1,
    releases: num(r.releases) === 1,
    rate: num(r.rate) === 1,
    staged: num(r.staged) === 1,
    boosts: num(r.boosts) === 1,
    ready: num(r.ready) === 1,
    later: { mark: numOrNull(r.next_mark), parked: numOrNull(r.next_parked) },
  };
}
