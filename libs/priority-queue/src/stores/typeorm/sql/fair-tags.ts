import { FairTagOverflowError } from '../../../core/errors';
import { advanceVirtualTime, DEFAULT_TENANT_WEIGHT, MAX_DOUBLE_FAIR_TAG, MAX_FAIR_TAG, nextFinishTag, tenantKeyOf } from '../../../core/fairness';
import { q, run, type StoreContext } from '../context';
import type { Exec } from '../db';
import { chunks } from '../rows';
import { tagTasksPg } from './fair-tags.pg';
import { join, list, raw, sql, type Sql } from './sql';

/**
 * DESIGN §7 fair share on the generic SQL path (MySQL / MariaDB, SQLite; the rules are core's:
 * core/fairness.ts nextFinishTag, advanceVirtualTime). V[p] lives in `<prefix>fair_levels`,
 * F[t,p] in `<prefix>fair_tags`, the weights in `<prefix>tenant_weights` (schema/<dialect>/1-tables.sql).
 *
 * Tagging (create, a priority change to another level, a boost) runs in the caller's
 * transaction: (1) the F rows of the batch's (tenant, level) pairs are made to exist and (2) are
 * read FOR UPDATE, so concurrent creates of one tenant and level queue up on the row instead of
 * computing the same tag; (3) V and the weights are read in one statement; (4) the new F values
 * are written in one upsert. Creates do not take the queue lock: a claim that commits V while a
 * create runs is seen by the create only if it committed before the create read V (the create is
 * then ordered before that claim, whose V was computed without the new task anyway).
 *
 * SQLite reads integers as doubles (better-sqlite3 without safe integers): tags there stop at
 * 2^53 - 1 (FairTagOverflowError, as on the memory store); MySQL goes on to MAX_FAIR_TAG.
 */

export interface TagRequest {
  tenantId: string | null;
  priority: number;
}

/** Fair tags for `items`, in their order (each one's F[t,p] moves before the next is tagged). */
export async function tagTasks(x: Exec, c: StoreContext, items: readonly TagRequest[]): Promise<bigint[]> {
  if (items.length === 0) return [];
  if (c.d.kind === 'postgres') return tagTasksPg(x, c, items); // one call of <prefix>fair_tag()
  const pairs = new Map<string, { tenantKey: string; priority: number }>();
  for (const t of items) {
    const tenantKey = tenantKeyOf(t.tenantId);
    pairs.set(pairKey(tenantKey, t.priority), { tenantKey, priority: t.priority });
  }
  const sorted = [...pairs.values()].sort((a, b) => (a.tenantKey < b.tenantKey ? -1 : a.tenantKey > b.tenantKey ? 1 : a.priority - b.priority));
  const F = raw(c.t.fairTags);
  const finish = new Map<string, bigint>();
  for (const part of chunks(sorted, 300)) {
    // (1) rows at 0 where missing (locks them on MySQL / PostgreSQL), in key order
    const values = part.map((p) => sql`(${c.queue}, ${p.tenantKey}, ${p.priority}, 0)`);
    await run(x, sql`INSERT INTO ${F} (queue, tenant_key, priority, finish) VALUES ${join(values, ', ')} ${raw(ignoreDuplicate(c))}`);
    // (2) their values, locked
    const where = join(part.map((p) => sql`(tenant_key = ${p.tenantKey} AND priority = ${p.priority})`), ' OR ');
    const lock = raw(c.d.rowLocks ? ' FOR UPDATE' : '');
    for (const r of await q(x, sql`SELECT tenant_key, priority, finish FROM ${F} WHERE queue = ${c.queue} AND (${where})${lock}`)) {
      finish.set(pairKey(String(r.tenant_key), Number(r.priority)), big(r.finish));
    }
  }
  const { vtimes, weights } = await readLevelsAndWeights(x, c, [...new Set(items.map((t) => t.priority))], [...new Set(items.map((t) => t.tenantId).filter((t): t is string => t !== null))]);
  const max = c.d.kind === 'sqlite' ? MAX_DOUBLE_FAIR_TAG : MAX_FAIR_TAG;
  const tags = items.map((t) => {
    const key = pairKey(tenantKeyOf(t.tenantId), t.priority);
    const w = t.tenantId === null ? DEFAULT_TENANT_WEIGHT : (weights.get(t.tenantId) ?? DEFAULT_TENANT_WEIGHT);
    const tag = nextFinishTag(finish.get(key) ?? 0n, vtimes.get(t.priority) ?? 0n, w);
    if (tag > max) throw new FairTagOverflowError();
    finish.set(key, tag);
    return tag;
  });
  // (4) the new F values
  for (const part of chunks(sorted, 300)) {
    const values = part.map((p) => sql`(${c.queue}, ${p.tenantKey}, ${p.priority}, ${c.big(finish.get(pairKey(p.tenantKey, p.priority))!)})`);
    await run(x, sql`INSERT INTO ${F} (queue, tenant_key, priority, finish) VALUES ${join(values, ', ')} ${raw(c.d.onConflictUpdate(['queue', 'tenant_key', 'priority'], ['finish']))}`);
  }
  return tags;
}

/** V[p] = max(V[p], tag) for each claimed task, in the claim's transaction (queue lock held). */
export async function advanceVirtualTimes(x: Exec, c: StoreContext, claimed: ReadonlyArray<{ priority: number; tag: bigint }>): Promise<void> {
  if (claimed.length === 0) return;
  const top = new Map<number, bigint>();
  for (const t of claimed) top.set(t.priority, advanceVirtualTime(top.get(t.priority) ?? 0n, t.tag));
  const L = raw(c.t.fairLevels);
  const greatest =
    c.d.kind === 'mysql'
      ? 'ON DUPLICATE KEY UPDATE vtime = GREATEST(vtime, VALUES(vtime))'
      : c.d.kind === 'sqlite'
        ? 'ON CONFLICT (queue, priority) DO UPDATE SET vtime = max(vtime, excluded.vtime)'
        : `ON CONFLICT (queue, priority) DO UPDATE SET vtime = GREATEST(${c.t.fairLevels}.vtime, excluded.vtime)`;
  for (const part of chunks([...top], 500)) {
    const values = part.map(([p, v]) => sql`(${c.queue}, ${p}, ${c.big(v)})`);
    await run(x, sql`INSERT INTO ${L} (queue, priority, vtime) VALUES ${join(values, ', ')} ${raw(greatest)}`);
  }
}

/** V of the given levels and the weights of the given tenants, in one read. */
async function readLevelsAndWeights(x: Exec, c: StoreContext, levels: readonly number[], tenants: readonly string[]): Promise<{ vtimes: Map<number, bigint>; weights: Map<string, number> }> {
  const vtimes = new Map<number, bigint>();
  const weights = new Map<string, number>();
  const parts: Sql[] = [];
  for (const part of chunks(levels, 500)) {
    parts.push(sql`SELECT 0 AS kind, '' AS tenant_key, priority, vtime AS val FROM ${raw(c.t.fairLevels)} WHERE queue = ${c.queue} AND priority IN (${list(part)})`);
  }
  for (const part of chunks(tenants, 500)) {
    parts.push(sql`SELECT 1 AS kind, tenant_key, 0 AS priority, weight AS val FROM ${raw(c.t.tenantWeights)} WHERE queue = ${c.queue} AND tenant_key IN (${list(part)})`);
  }
  for (const r of await q(x, join(parts, ' UNION ALL '))) {
    if (Number(r.kind) === 0) vtimes.set(Number(r.priority), big(r.val));
    else weights.set(String(r.tenant_key), Number(r.val));
  }
  return { vtimes, weights };
}

function ignoreDuplicate(c: StoreContext): string {
  return c.d.kind === 'mysql' ? 'ON DUPLICATE KEY UPDATE finish = finish' : 'ON CONFLICT (queue, tenant_key, priority) DO NOTHING';
}

function pairKey(tenantKey: string, priority: number): string {
  return `${priority}\u001f${tenantKey}`;
}

/** A bigint column as bigint (pg / mysql2: a decimal string; better-sqlite3: a number). */
function big(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(typeof v === 'number' ? v : String(v));
}
