import { q, run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { laneKeysOf, slotKeys } from '../rows';
import { list, raw, sql } from './sql';

/**
 * Claim step 2: slots freed since the last claim. A task that leaves SUBMITTING / SUBMITTED /
 * RUNNING appends one row to `releases` in its own transaction (no counter row touched, so a
 * finishing task never waits for a claim); here, under the queue lock, the counters are
 * decremented and the lanes parked on those resources are put back in the ready set.
 * Counters can only be higher than the truth between a release and the next claim, never
 * lower: limits are never exceeded.
 *
 * Locks: queue lock. Rows appended by transactions still open are not visible and are applied
 * by a later claim (their slot is still counted meanwhile).
 *
 * Returns how many slots to subtract per resource key. Reads `page` rows per statement and goes
 * on until none is left: a release left for the next claim would keep lanes parked that may
 * give this claim its tasks.
 */
export async function takeReleases(x: Exec, c: StoreContext, page = 10_000): Promise<Map<string, number>> {
  const freed = new Map<string, number>();
  for (;;) {
    const rows = await q<{ id: unknown } & Record<string, unknown>>(
      x,
      sql`SELECT r.id, l.provider_key, l.account_id, l.tenant_id, l.concurrency_key
        FROM ${raw(c.t.releases)} r JOIN ${raw(c.t.lanes)} l ON l.queue = r.queue AND l.lane_key = r.lane_key
        WHERE r.queue = ${c.queue} ORDER BY r.id LIMIT ${raw(String(page))}`,
    );
    if (rows.length === 0) break;
    const keys = new Set<string>();
    for (const r of rows) {
      for (const k of slotKeys(laneKeysOf(r))) {
        freed.set(k, (freed.get(k) ?? 0) + 1);
        keys.add(k);
      }
    }
    await run(x, sql`DELETE FROM ${raw(c.t.releases)} WHERE id IN (${list(rows.map((r) => r.id))})`);
    if (keys.size > 0) await unparkOn(x, c, [...keys]);
    if (rows.length < page) break;
  }
  return freed;
}

/** Lanes parked on any of these resources go back to the ready set (re-checked by the claim). */
export async function unparkOn(x: Exec, c: StoreContext, rkeys: readonly string[]): Promise<void> {
  await run(
    x,
    sql`UPDATE ${raw(c.t.lanes)} SET parked_on = NULL,
        ready = CASE WHEN h_seq IS NULL OR parked_until IS NOT NULL THEN 0 ELSE 1 END
      WHERE queue = ${c.queue} AND parked_on IN (${list(rkeys)})`,
  );
}

/** Claim step 3: lanes waiting for a rate token whose time has come go back to the ready set. */
export async function unparkDueRate(x: Exec, c: StoreContext, now: number): Promise<void> {
  await run(
    x,
    sql`UPDATE ${raw(c.t.lanes)} SET parked_until = NULL,
        ready = CASE WHEN h_seq IS NULL OR parked_on IS NOT NULL THEN 0 ELSE 1 END
      WHERE queue = ${c.queue} AND parked_until IS NOT NULL AND parked_until <= ${now}`,
  );
}

/** setLimits: any limit may have been raised; every parked lane is re-checked at the next claim. */
export async function unparkAll(x: Exec, c: StoreContext): Promise<void> {
  await run(
    x,
    sql`UPDATE ${raw(c.t.lanes)} SET parked_on = NULL, parked_until = NULL,
        ready = CASE WHEN h_seq IS NULL THEN 0 ELSE 1 END
      WHERE queue = ${c.queue} AND (parked_on IS NOT NULL OR parked_until IS NOT NULL)`,
  );
}
