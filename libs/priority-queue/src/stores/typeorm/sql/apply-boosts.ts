import { boostedPriority } from '../../../core/boost';
import type { TaskStatus } from '../../../core/task';
import type { BoostedTask } from '../../../core/task-store.port';
import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { orderColumns } from '../order-columns';
import { num, rowToTask, TASK_COLUMNS } from '../rows';
import { tagTasks } from './fair-tags';
import { join, list, raw, sql, type Sql } from './sql';
import { markStaged } from './stage-marks';

/** Due boosts read (and fired) per statement. */
const BOOST_PAGE = 1000;

/**
 * Claim step 0 (DESIGN §7, core/boost.ts; Redis: lua/lib.lua applyDueBoosts): every unfired
 * boost with boost_due <= now fires, in (boost_due, seq) order, a page at a time. A task still
 * PENDING_SUBMIT below its boost priority takes it as a priority change: version + 1, new order
 * columns (re-tagged at the new level with fairness, in firing order), staged again so the
 * claim's merge puts it in its lane with its new key (the lane head's re-key of changePriority);
 * any other task is left as it is. Either way boost_due becomes NULL: a boost fires once.
 * Returns the raised tasks as the boost wrote them, in firing order.
 *
 * Reads the index (queue, boost_due) (partial WHERE boost_due IS NOT NULL on SQLite and
 * PostgreSQL), so a claim with no due boost costs one index probe (MySQL: folded into
 * preparation-due.ts). Locks: queue lock (caller); the due rows FOR UPDATE.
 */
export async function applyDueBoosts(x: Exec, c: StoreContext, now: number): Promise<BoostedTask[]> {
  const T = raw(c.t.tasks);
  const lock = raw(c.d.rowLocks ? ' FOR UPDATE' : '');
  const out: BoostedTask[] = [];
  for (;;) {
    const rows = await q(
      x,
      sql`SELECT ${raw(TASK_COLUMNS)} FROM ${T} WHERE queue = ${c.queue} AND boost_due IS NOT NULL AND boost_due <= ${now}
        ORDER BY boost_due, seq LIMIT ${raw(String(BOOST_PAGE))}${lock}`,
    );
    if (rows.length === 0) break;
    const raised: Array<{ row: Row; to: number }> = [];
    for (const r of rows) {
      const to = boostedPriority({ status: String(r.status) as TaskStatus, priority: num(r.priority), boostPriority: num(r.boost_priority) });
      if (to !== null) raised.push({ row: r, to });
    }
    const tags = c.fair ? await tagTasks(x, c, raised.map(({ row, to }) => ({ tenantId: row.tenant_id === null ? null : String(row.tenant_id), priority: to }))) : null;
    await run(x, sql`UPDATE ${T} SET boost_due = NULL WHERE seq IN (${list(rows.map((r) => num(r.seq)))})`);
    if (raised.length > 0) {
      const cases = (col: (i: number) => unknown): Sql => join(raised.map(({ row }, i) => sql` WHEN ${num(row.seq)} THEN ${col(i)}`), '');
      const keys = raised.map(({ row, to }, i) => orderColumns({ priority: to, runAt: num(row.run_at), fairTag: tags ? tags[i].toString() : undefined }, c.aging, c.fair));
      await run(
        x,
        sql`UPDATE ${T} SET priority = CASE seq${cases((i) => raised[i].to)} END, k1 = CASE seq${cases((i) => c.big(keys[i].k1))} END,
          k2 = CASE seq${cases((i) => c.big(keys[i].k2))} END, staged = 1, version = version + 1, updated_at = ${now}
          WHERE seq IN (${list(raised.map(({ row }) => num(row.seq)))})`,
      );
      await markStaged(x, c, Math.min(...raised.map(({ row }) => num(row.run_at))));
      raised.forEach(({ row, to }, i) => {
        const before = rowToTask(row, c.fair);
        const task = { ...before, priority: to, version: before.version + 1, updatedAt: now, fairTag: tags ? tags[i].toString() : before.fairTag };
        out.push({ task, fromPriority: before.priority });
      });
    }
    if (rows.length < BOOST_PAGE) break;
  }
  return out;
}
