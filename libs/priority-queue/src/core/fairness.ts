import { FairTagOverflowError } from './errors';

/**
 * DESIGN §7, fair share between tenants (queue option `fairness: 'tenant'`): start-time fair
 * queuing with one virtual time per priority level. The pure rules every store applies, in the
 * same atomic step as the create / claim / priority change that triggers them; the Redis scripts
 * mirror them line by line (stores/redis/lua/lib.lua, `fair*` helpers).
 *
 * Tags are unsigned integers that only grow: each task created at a level adds at most
 * FAIR_QUANTUM (1,000,000, weight 1) to that level's tags. They are kept exact as bigint here and
 * shown on Task as a decimal string. Each store keeps them exact up to its own bound and fails a
 * create or re-tag that would pass it with FairTagOverflowError instead of rounding or wrapping:
 * - MAX_FAIR_TAG = 2^63 - 1 (a signed SQL BIGINT: PostgreSQL, MySQL / MariaDB), reached after
 *   9.2e12 creations at one level of one queue, 29 years at a sustained 10,000 tasks/s;
 * - MAX_DOUBLE_FAIR_TAG = 2^53 - 1 where tags are doubles (the memory store's inline keys, Lua
 *   numbers in the Redis scripts, better-sqlite3's integers), reached after 9e9 creations at one
 *   level: about 100 days at a sustained 1,000 tasks/s of weight 1.
 */

/** The only fairness policy so far: fair share between the tenants (tenantId) of a priority level. */
export type Fairness = 'tenant';

export const FAIRNESS_MODES: readonly Fairness[] = ['tenant'];

/** Tag increment of a task of weight 1; a tenant of weight w adds floor(FAIR_QUANTUM / w). */
export const FAIR_QUANTUM = 1_000_000;
export const MIN_TENANT_WEIGHT = 1;
export const MAX_TENANT_WEIGHT = 1000;
export const DEFAULT_TENANT_WEIGHT = 1;
/** Largest tag a store with 64-bit integers keeps (2^63 - 1, a signed SQL BIGINT). */
export const MAX_FAIR_TAG = (1n << 63n) - 1n;
/** Largest tag a store that computes with doubles keeps exactly (2^53 - 1). */
export const MAX_DOUBLE_FAIR_TAG = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Tasks without a tenant form one tenant of their own: the key that stands for it in the finish
 * tags. Real tenant ids are 1 to 255 characters (validation.ts), so '' is never one of them.
 */
export const NO_TENANT = '';

export function tenantKeyOf(tenantId: string | null): string {
  return tenantId === null ? NO_TENANT : tenantId;
}

/** floor(FAIR_QUANTUM / w): what one task of a tenant of weight w adds to its finish tag. */
export function fairIncrement(weight: number): bigint {
  return BigInt(Math.floor(FAIR_QUANTUM / weight));
}

/**
 * The tag of a task created (or re-tagged) at a level by a tenant whose finish tag there is
 * `finish` (0 when none), with the level's virtual time `virtualTime` (0 when none):
 * F[t,p] = max(F[t,p], V[p]) + floor(1_000_000 / w_t). The new F[t,p] is the tag.
 * Throws FairTagOverflowError past MAX_FAIR_TAG (see the header).
 */
export function nextFinishTag(finish: bigint, virtualTime: bigint, weight: number): bigint {
  const tag = (finish > virtualTime ? finish : virtualTime) + fairIncrement(weight);
  if (tag > MAX_FAIR_TAG) throw new FairTagOverflowError();
  return tag;
}

/** V[p] after a task with `tag` is claimed at that level: max(V[p], tag). */
export function advanceVirtualTime(virtualTime: bigint, tag: bigint): bigint {
  return tag > virtualTime ? tag : virtualTime;
}

/** An F[t,p] entry at or below V[p] changes no later tag (max(F, V) = V): a store may drop it. */
export function finishTagObsolete(finish: bigint, virtualTime: bigint): boolean {
  return finish <= virtualTime;
}

/** Task.fairTag (a decimal string) as a number to compare or compute with. */
export function parseFairTag(tag: string): bigint {
  return BigInt(tag);
}

/** Order of two tags as Task shows them (decimal strings without leading zeros), without parsing. */
export function compareFairTags(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The virtual times and finish tags of one queue held in the process (for a store that keeps its
 * state there; stores on a server keep the same numbers in their own hashes / tables). Keys are
 * priority levels and (tenant key, level) pairs; absent entries are 0.
 */
export class FairTags {
  private readonly virtual = new Map<number, bigint>();
  private readonly finish = new Map<string, bigint>();

  /** Tags a task of `tenantId` (null = the tenantless tenant) at `priority` with the tenant's weight. */
  tag(tenantId: string | null, priority: number, weight: number): bigint {
    const key = finishKey(tenantKeyOf(tenantId), priority);
    const tag = nextFinishTag(this.finish.get(key) ?? 0n, this.virtualTime(priority), weight);
    this.finish.set(key, tag);
    return tag;
  }

  /** A task with `tag` was claimed at `priority`; drops the tenant's finish tag when it is spent. */
  claimed(tenantId: string | null, priority: number, tag: bigint): void {
    const v = advanceVirtualTime(this.virtualTime(priority), tag);
    this.virtual.set(priority, v);
    const key = finishKey(tenantKeyOf(tenantId), priority);
    const f = this.finish.get(key);
    if (f !== undefined && finishTagObsolete(f, v)) this.finish.delete(key);
  }

  virtualTime(priority: number): bigint {
    return this.virtual.get(priority) ?? 0n;
  }

  finishTag(tenantId: string | null, priority: number): bigint {
    return this.finish.get(finishKey(tenantKeyOf(tenantId), priority)) ?? 0n;
  }

  /** Puts a finish tag back to an earlier value (a store undoing a failed create batch); 0 = none. */
  setFinishTag(tenantId: string | null, priority: number, value: bigint): void {
    const key = finishKey(tenantKeyOf(tenantId), priority);
    if (value === 0n) this.finish.delete(key);
    else this.finish.set(key, value);
  }

  /** Finish tags kept (for tests of the dropping rule). */
  get size(): number {
    return this.finish.size;
  }
}

function finishKey(tenantKey: string, priority: number): string {
  return `${priority}\u001f${tenantKey}`;
}
