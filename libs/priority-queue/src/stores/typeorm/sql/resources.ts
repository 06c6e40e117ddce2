import { q, run, type StoreContext } from '../context';
import type { Exec, Row } from '../db';
import { chunks, num, numOrNull, rk } from '../rows';
import { join, list, raw, sql, type Sql } from './sql';

/**
 * The resources table: per provider ('p:'), account ('a:'), tenant ('t:'), default tenant
 * quota ('d:'), concurrency key ('c:') the configured limit and the live counters (slots in
 * use, GCRA theoretical arrival time). Read and written only under the queue lock (claims and
 * setLimits), in the claim's own transaction: never a count read outside it.
 */
export interface Resource {
  rkey: string;
  inUse: number;
  tat: number;
  configured: boolean;
  limit: number | null;
  paused: boolean;
  qps: number | null;
  burst: number | null;
  accountConcurrency: number | null;
  dirty: boolean;
}

export function emptyResource(rkey: string): Resource {
  return { rkey, inUse: 0, tat: 0, configured: false, limit: null, paused: false, qps: null, burst: null, accountConcurrency: null, dirty: false };
}

export function resourceFromRow(r: Row): Resource {
  return {
    rkey: String(r.rkey),
    inUse: num(r.in_use),
    tat: num(r.tat),
    configured: num(r.configured) === 1,
    limit: numOrNull(r.limit_value),
    paused: num(r.paused) === 1,
    qps: numOrNull(r.qps),
    burst: numOrNull(r.burst),
    accountConcurrency: numOrNull(r.account_concurrency),
    dirty: false,
  };
}

const ALL = 'rkey, in_use, tat, configured, limit_value, paused, qps, burst, account_concurrency';

/** Loads the missing keys into `cache` (absent rows = no limit, nothing in use). */
export async function loadResources(x: Exec, c: StoreContext, cache: Map<string, Resource>, keys: Iterable<string>): Promise<void> {
  const missing = [...new Set(keys)].filter((k) => !cache.has(k));
  for (const part of chunks(missing, 500)) {
    for (const k of part) cache.set(k, emptyResource(k));
    const rows = await q(x, sql`SELECT ${raw(ALL)} FROM ${raw(c.t.resources)} WHERE queue = ${c.queue} AND rkey IN (${list(part)})`);
    for (const r of rows) cache.set(String(r.rkey), resourceFromRow(r));
  }
}

/**
 * The provider resources that came joined to a page of ready lanes (sql/lanes.ts readyLanes,
 * MySQL: columns `pr_*`), into `cache` where it has no entry yet (a cached one may already carry
 * this claim's changes).
 */
export function cacheProviders(cache: Map<string, Resource>, lanes: readonly Row[]): void {
  for (const l of lanes) {
    if (l.pr_joined === undefined) continue;
    const key = rk.provider(String(l.provider_key));
    if (cache.has(key)) continue;
    if (l.pr_rkey === null || l.pr_rkey === undefined) cache.set(key, emptyResource(key));
    else {
      const r: Row = {};
      for (const k of Object.keys(l)) if (k.startsWith('pr_')) r[k.slice(3)] = l[k];
      cache.set(key, resourceFromRow(r));
    }
  }
}

export async function allResources(x: Exec, c: StoreContext): Promise<Resource[]> {
  return (await q(x, sql`SELECT ${raw(ALL)} FROM ${raw(c.t.resources)} WHERE queue = ${c.queue}`)).map(resourceFromRow);
}

const COLUMNS = ['queue', 'rkey', 'in_use', 'tat', 'configured', 'limit_value', 'paused', 'qps', 'burst', 'account_concurrency'];

/**
 * Upserts changed resources. `countersOnly`: a claim changes counters and never the
 * configuration (setLimits writes everything).
 */
export async function writeResources(x: Exec, c: StoreContext, resources: Iterable<Resource>, countersOnly: boolean): Promise<void> {
  for (const s of writeResourcesSql(c, resources, countersOnly)) await run(x, s);
}

export function writeResourcesSql(c: StoreContext, resources: Iterable<Resource>, countersOnly: boolean): Sql[] {
  const dirty = [...resources].filter((r) => r.dirty);
  const update = countersOnly ? ['in_use', 'tat'] : COLUMNS.slice(2);
  const out: Sql[] = [];
  for (const part of chunks(dirty, 500)) {
    const values: Sql[] = part.map(
      (r) =>
        sql`(${list([c.queue, r.rkey, r.inUse, r.tat, r.configured ? 1 : 0, r.limit, r.paused ? 1 : 0, r.qps, r.burst, r.accountConcurrency])})`,
    );
    out.push(
      sql`INSERT INTO ${raw(c.t.resources)} (${raw(COLUMNS.join(', '))}) VALUES ${join(values, ', ')}
        ${raw(c.d.onConflictUpdate(['queue', 'rkey'], update))}`,
    );
    for (const r of part) r.dirty = false;
  }
  return out;
}
