import { explainTask, type AdmissionState, type TaskExplanation } from '../../../core/explain';
import { TaskNotFoundError } from '../../../core/errors';
import { q, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { ORDER_COLUMNS, orderOfRow, orderTuple } from '../order-columns';
import { chunks, laneKeysOf, num, rowToTask, slotKeys, TASK_COLUMNS } from '../rows';
import { byId } from './by-id';
import { snapshotOf } from './limits';
import { pendingLanes, smallReads } from './pending-lanes';
import { allResources } from './resources';
import { list, raw, sql } from './sql';

/**
 * explain: in one transaction (reads only, no lock), the task, the resources (limits, GCRA
 * state, slots in use) with the slots freed by finished tasks that no claim has applied yet
 * taken off (sql/apply-releases.ts: the next claim applies them first), and, when the task is
 * admissible, the due tasks ranked before it in the admissible lanes: one count per group of
 * lanes through the lane index (`staged` = 0) and one through the staged index (due staged
 * tasks), each stopped at the cap.
 */
export async function explainTaskSql(c: StoreContext, id: string): Promise<TaskExplanation> {
  return c.db.tx(async (x) => {
    await smallReads(x, c);
    const [r] = await q(x, sql`SELECT ${raw(TASK_COLUMNS)} FROM ${raw(c.t.tasks)} WHERE ${byId(c, id)}`);
    if (!r) throw new TaskNotFoundError(id);
    const now = await c.now(x);
    const state = await admissionState(x, c);
    return explainTask(rowToTask(r, c.fair), now, state, async (admissible, cap) => {
      const lanes = (await pendingLanes(x, c, now)).filter((l) => admissible(l.keys)).map((l) => l.laneKey);
      return countBefore(x, c, r, lanes, now, cap);
    });
  });
}

/** The admission state as the next claim sees it: resources, less the releases not yet applied. */
async function admissionState(x: Exec, c: StoreContext): Promise<AdmissionState> {
  const resources = await allResources(x, c);
  const freed = new Map<string, number>();
  const rows = await q(
    x,
    sql`SELECT l.provider_key, l.account_id, l.tenant_id, l.concurrency_key, COUNT(*) AS n
      FROM ${raw(c.t.releases)} r JOIN ${raw(c.t.lanes)} l ON l.queue = r.queue AND l.lane_key = r.lane_key
      WHERE r.queue = ${c.queue} GROUP BY l.provider_key, l.account_id, l.tenant_id, l.concurrency_key`,
  );
  for (const g of rows) for (const k of slotKeys(laneKeysOf(g))) freed.set(k, (freed.get(k) ?? 0) + num(g.n));
  const tat: Record<string, number> = {};
  const accounts: Record<string, number> = {};
  const tenants: Record<string, number> = {};
  const concurrencyKeys: Record<string, number> = {};
  const inUse = (rkey: string, n: number) => Math.max(0, n - (freed.get(rkey) ?? 0));
  for (const res of resources) {
    const key = res.rkey.slice(2);
    const kind = res.rkey.slice(0, 2);
    if (kind === 'p:') tat[key] = res.tat;
    else if (kind === 'a:') accounts[key] = inUse(res.rkey, res.inUse);
    else if (kind === 't:') tenants[key] = inUse(res.rkey, res.inUse);
    else if (kind === 'c:') concurrencyKeys[key] = inUse(res.rkey, res.inUse);
  }
  const state: AdmissionState = { limits: snapshotOf(resources), tat, accounts, tenants, concurrencyKeys };
  return state;
}

/** Due PENDING_SUBMIT tasks of these lanes ranked before the task of row `r`, up to `cap`. */
async function countBefore(x: Exec, c: StoreContext, r: Row, lanes: readonly string[], now: number, cap: number): Promise<number> {
  const T = raw(c.t.tasks);
  const before = sql`(${raw(ORDER_COLUMNS)}) < ${orderTuple(c, orderOfRow(r, c.fair))}`;
  let n = 0;
  for (const part of chunks(lanes, 500)) {
    for (const where of [sql`staged = 0`, sql`staged = 1 AND run_at <= ${now}`]) {
      if (n >= cap) return n;
      const [got] = await q(
        x,
        sql`SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM ${T} WHERE queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND ${where}
          AND lane_key IN (${list(part)}) AND ${before} LIMIT ${raw(String(cap - n))}) s`,
      );
      n += num(got.n);
    }
  }
  return n;
}
