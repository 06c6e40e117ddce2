import type { Transition } from '../../../core/task';
import type { SweepRequest } from '../../../core/task-store.port';
import { q, run, type StoreContext } from '../context';
import { num } from '../rows';
import { anyExpired, expiredColumns, recoverNow } from './recover-expired';
import { raw, sql } from './sql';

/**
 * sweepExpired (table `<prefix>sweeps`, one row per queue):
 * 1. ONE statement, no transaction, no lock: the queue's lease time, the store time and
 *    whether anything is due for recovery (recover-expired.ts expiredColumns). An idle queue
 *    costs each worker this one read per sweep period.
 * 2. Lease live -> null; nothing due -> [] (no lease taken: nothing written).
 * 3. `UPDATE sweeps SET lease_until = now + leaseMs ... WHERE queue = ? AND lease_until <= now`,
 *    autocommit: a try-lock that never waits for more than another such one-row UPDATE; 0 rows
 *    = another worker took it since step 1 -> null.
 * 4. The sweep's transaction (recoverNow), under the queue lock as always.
 * The lease is never released: it lapses after leaseMs, so a holder that died delays the next
 * sweep of the queue by at most that.
 */
export async function sweepExpired(c: StoreContext, request: SweepRequest): Promise<{ out: Transition[]; changed: boolean } | null> {
  if (request.limit <= 0) return { out: [], changed: false };
  const S = raw(c.t.sweeps);
  const now = c.nowSql();
  const [r] = await q<{ l: unknown; n: unknown; a: unknown; b: unknown; d: unknown }>(
    c.db,
    sql`SELECT (SELECT lease_until FROM ${S} WHERE queue = ${c.queue}) AS l, ${now} AS n, ${expiredColumns(c)}`,
  );
  if (!r) return { out: [], changed: false };
  if (r.l !== null && r.l !== undefined && num(r.l) > num(r.n)) return null;
  if (!anyExpired(r)) return { out: [], changed: false };
  const leaseMs = Math.max(1, Math.floor(request.leaseMs));
  const taken = await run(
    c.db,
    sql`UPDATE ${S} SET lease_until = ${now} + ${leaseMs}, owner = ${request.owner.slice(0, 255)} WHERE queue = ${c.queue} AND lease_until <= ${now}`,
  );
  if (taken === 0) return null;
  return recoverNow(c, request.limit);
}

/** init(): the queue's row of the sweeps table (lease free). */
export async function addSweepRow(c: StoreContext): Promise<void> {
  const S = c.t.sweeps;
  const row = sql`(${c.queue}, 0)`;
  const text =
    c.d.kind === 'mysql'
      ? sql`INSERT IGNORE INTO ${raw(S)} (queue, lease_until) VALUES ${row}`
      : sql`INSERT INTO ${raw(S)} (queue, lease_until) VALUES ${row} ON CONFLICT (queue) DO NOTHING`;
  await run(c.db, text);
}
