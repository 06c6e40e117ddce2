import { tenantKeyOf } from '../../../core/fairness';
import { q, type StoreContext } from '../context';
import type { Exec } from '../db';
import { pgFairTagFunctionName, pgStoreError } from '../schema/pg-functions';
import type { TagRequest } from './fair-tags';
import { raw, sql } from './sql';

/**
 * tagTasks on PostgreSQL (a changePriority's re-tag, a create with idempotency keys): ONE call of
 * `<prefix>fair_tag()` (schema/postgres/1-fair-tags.sql), the function the create statement and
 * the claim's boosts use, so every tag on PostgreSQL comes from one definition and every caller
 * locks its fair_tags rows in the same order (see the function's locking comment).
 * Locks: the fair_tags rows of the items' (tenant, level) pairs, until the caller's commit.
 */
export async function tagTasksPg(x: Exec, c: StoreContext, items: readonly TagRequest[]): Promise<bigint[]> {
  const s = sql`SELECT ${raw(pgFairTagFunctionName(c.t))}(${c.queue}, ${items.map((t) => tenantKeyOf(t.tenantId))}::varchar[],
    ${items.map((t) => t.priority)}::integer[]) AS tags`;
  const [r] = await q<{ tags: unknown[] }>(x, s).catch(pgStoreError);
  return r.tags.map((v) => BigInt(String(v)));
}
