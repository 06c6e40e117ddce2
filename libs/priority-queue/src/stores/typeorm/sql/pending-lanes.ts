import type { AdmissionKeys } from '../../../core/explain';
import { q, type StoreContext } from '../context';
import type { Exec } from '../db';
import { laneKeysOf } from '../rows';
import { raw, sql, type Sql } from './sql';

export interface PendingLane {
  laneKey: string;
  keys: AdmissionKeys;
}

/**
 * The lanes that may hold due PENDING_SUBMIT tasks (explain's `ahead`, query's claim order):
 * - lanes with a head (a lane's merged tasks, `staged` = 0, all rank at or after its head:
 *   claims keep that invariant, schema/postgres/1-claim.sql);
 * - PostgreSQL: lanes marked by creates whose marks no claim has applied yet;
 * - the lanes of due staged tasks (new on MySQL / SQLite, retried, re-prioritised: usually few).
 * A stale lane (a head whose tasks were all canceled) may be listed: its reads find nothing.
 * Reads only (no lock): the lane list of one moment, like the claim's own view.
 */
export async function pendingLanes(x: Exec, c: StoreContext, now: number): Promise<PendingLane[]> {
  const cols = 'lane_key, provider_key, account_id, tenant_id, concurrency_key';
  const parts: Sql[] = [
    sql`SELECT ${raw(cols)} FROM ${raw(c.t.lanes)} WHERE queue = ${c.queue} AND h_seq IS NOT NULL`,
    sql`SELECT ${raw(cols)} FROM ${raw(c.t.tasks)} WHERE queue = ${c.queue} AND status = 'PENDING_SUBMIT' AND staged = 1 AND run_at <= ${now}`,
  ];
  if (c.d.kind === 'postgres') parts.push(sql`SELECT ${raw(cols)} FROM ${raw(c.t.laneMarks)} WHERE queue = ${c.queue}`);
  const union = parts.reduce((a, b) => sql`${a} UNION ${b}`);
  const out = new Map<string, PendingLane>();
  for (const r of await q(x, union)) {
    const k = laneKeysOf(r);
    const laneKey = String(r.lane_key);
    if (!out.has(laneKey)) {
      out.set(laneKey, { laneKey, keys: { providerKey: k.provider_key, accountId: k.account_id, tenantId: k.tenant_id, concurrencyKey: k.concurrency_key } });
    }
  }
  return [...out.values()];
}

/**
 * PostgreSQL, for the operations' reads (query, explain): no JIT and no parallel workers for the
 * rest of the transaction. Their results are small and their index reads short, but a planner
 * that overestimates the due staged rows (delayed tasks share the staged index) plans a
 * parallel sort and compiles it: about 30 ms of JIT and 100+ ms of worker start-up measured at a
 * million tasks, for reads that take a few ms.
 */
export async function smallReads(x: Exec, c: StoreContext): Promise<void> {
  if (c.d.kind !== 'postgres') return;
  await x.run('SET LOCAL jit = off');
  await x.run('SET LOCAL max_parallel_workers_per_gather = 0');
}
