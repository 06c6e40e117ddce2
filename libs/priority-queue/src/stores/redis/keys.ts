import { ValidationError } from '../../core/errors';
import { Messages } from '../../core/messages';
import { isKey } from '../../core/validation';

/**
 * Every Redis key of a queue, built here and nowhere else.
 *
 * All keys of one queue start with the hash tag `{prefix:queue}`, so they live in one slot and
 * every Lua script runs on one node of a Redis Cluster. The prefix isolates applications that
 * share a Redis; the queue name isolates queues of one application. Both may contain `:`, so
 * each is written escaped (tagPart: `\` before every `\` and `:`): the one unescaped `:` of the
 * tag separates them, and two different pairs never share a key (`shop:eu` + `mail` is
 * `{shop\:eu:mail}`, `shop` + `eu:mail` is `{shop:eu\:mail}`). Names without `:` or `\` are
 * written as they are, so their keys are the same as before the escaping.
 *
 * The scripts build every key from the base `{prefix:queue}:` (ARGV[1]) and the names below,
 * which scripts.ts emits into the prelude of every script: fixed keys are `base + name`, keys
 * that embed an id (a task, a lane, ...) are `base + DYNAMIC_KEYS[kind] + id`. KEYS[1] of every
 * call is the `seq` key, so that a Redis Cluster client routes it to the queue's slot.
 */
export const FIXED_KEYS = [
  /** string: store-wide task sequence (INCR). */
  'seq',
  /** hash: store settings fixed for the queue's life (agingIntervalMs, fairness: 'tenant' or 'off'; keys = KEY_LAYOUT, the key layout). */
  'meta',
  /** zset (score 0, BYLEX order): one member per ready lane, `headOrderKey .. laneId`. */
  'ready',
  /** hash: laneId -> its member in `ready` (present iff the lane is ready). */
  'laneready',
  /** hash: laneId -> the resource it is parked on (present iff parked). */
  'lanepark',
  /** set: resources that have parked lanes. */
  'parkedres',
  /** zset: providerKey scored by the time its next rate token is due (rate-parked providers). */
  'ratewake',
  /** zset: not-yet-due PENDING_SUBMIT task ids scored by runAt. */
  'delayed',
  /** zset: task ids holding a lease, scored by leaseUntil. */
  'leases',
  /** zset: SUBMITTED / RUNNING task ids without a lease, scored by next poll time. */
  'polls',
  /** zset: non-terminal task ids with a deadline, scored by deadlineAt. */
  'deadlines',
  /**
   * zset: unfired deadline boosts (DESIGN §7, core/boost.ts) scored by boostAt, members
   * `hex14(seq) .. id` so that equal boost times fire in seq order; claim_submissions fires the due ones.
   */
  'boosts',
  /** zset: terminal task ids scored by finishedAt (purge). */
  'finished',
  /** hash: idempotencyKey -> task id. */
  'idem',
  /** hash: priority -> number of PENDING_SUBMIT tasks (due or not). */
  'pendcount',
  /** hashes: in-flight counts per providerKey / account / tenant / concurrency key. */
  'inflight_p',
  'inflight_a',
  'inflight_t',
  'inflight_c',
  /** set: providerKeys that have a limits hash. */
  'providers',
  /** hash: providerKey -> GCRA theoretical arrival time (ms, fractional). */
  'gcra',
  /** hashes: limit overrides per account (`provider\x1faccount`), tenant, concurrency key. */
  'lim_a',
  'lim_t',
  'lim_c',
  /** hash: defaultTenantQuota. */
  'lim_meta',
  /** hash: fair-share weight per tenant (DESIGN §7, 1..1000; absent = 1), read when a task is tagged. */
  'lim_w',
  /** hash (fair share only): priority -> V[p], the level's virtual time (core/fairness.ts; absent = 0). */
  'fairv',
  /**
   * hash (fair share only): `priority \x1f tenantId` ('' for tasks without a tenant) -> F[t,p],
   * the tenant's finish tag at the level; an entry at or below V[p] is dropped when its tenant's
   * task is claimed (it changes nothing; absent = 0).
   */
  'fairf',
  /** hash: the sweep lease (sweepExpired): `until` (store time, ms) and `owner` of the last sweep that took it. */
  'sweep',
] as const;

export type FixedKeyName = (typeof FIXED_KEYS)[number];

/** Suffixes of the keys that embed an id; the scripts append the id to `base + suffix`. */
export const DYNAMIC_KEYS = {
  /**
   * hash: one task (fields named after Task, `fairTag` as the order key's 16 hex digits; `_k`
   * order key while in a lane, `_l` lane id, `_i`
   * with an idempotency key: what the key is bound to, codec.ts idemScope; `_r` the removal
   * kept set it is in, lua/lib.lua keptKey).
   */
  task: 'task:',
  /** zset (score 0, BYLEX order): due tasks of one lane, members `orderKey .. taskId`. */
  lane: 'lane:',
  /** set: lanes parked on one resource. */
  parked: 'parked:',
  /** zset: task ids of one status scored by seq (list, counts); none for SUBMITTING (found through `leases`). */
  status: 'status:',
  /**
   * zset: due PENDING_SUBMIT task ids of one priority scored by runAt (stats oldest wait); only with
   * aging or fair share (without either, a lane's first member of a priority is its oldest: stats
   * reads the lanes).
   */
  due: 'due:',
  /** hash: limits of one provider (paused, qps, burst, accountConcurrency). */
  provider: 'provider:',
  /**
   * zset: finished task ids kept under a removal count / age (core/removal.ts), scored by
   * finishedAt; the id is `ok:<type>` (SUCCEEDED) or `fail:<type>` (the other terminal statuses).
   */
  kept: 'kept:',
} as const;

/** Pub/sub channel (suffix) the scripts publish on when work may have become claimable. */
export const WAKE_CHANNEL_SUFFIX = 'wake';

/** Value of the `keys` field of `meta`, written by init: the key layout of this version (the escaped hash tag). */
export const KEY_LAYOUT = 'escaped-tag';

/** Pub/sub channel (suffix) of task transitions between processes (event-transport.ts; the scripts never publish on it). */
export const EVENTS_CHANNEL_SUFFIX = 'events';

export interface QueueKeys {
  /** `{prefix:queue}:`, each part escaped (tagPart) */
  base: string;
  /** KEYS of every script call (one key of the queue's slot). */
  route: string[];
  channel: string;
  /** Channel of task transitions (published by the Node side, see event-transport.ts). */
  events: string;
  task(id: string): string;
  status(status: string): string;
}

/** A prefix or queue name as the hash tag writes it: `\` and `:` escaped by a `\`. */
export function tagPart(name: string): string {
  return name.replace(/[\\:]/g, '\\$&');
}

export function queueKeys(prefix: string, queue: string): QueueKeys {
  for (const [what, v] of [
    ['prefix', prefix],
    ['queue', queue],
  ] as const) {
    // the key rule of ids and keys (a lone surrogate would reach Redis as U+FFFD: two names, one
    // key space), and no brace: the hash tag ends at the first }
    if (!isKey(v) || /[{}]/.test(v)) {
      throw new ValidationError(Messages.invalidOption(what, JSON.stringify(v), 'a string of 1 to 255 characters without { or }, control characters or lone UTF-16 surrogates'));
    }
  }
  const base = `{${tagPart(prefix)}:${tagPart(queue)}}:`;
  return {
    base,
    route: [base + 'seq'],
    channel: base + WAKE_CHANNEL_SUFFIX,
    events: base + EVENTS_CHANNEL_SUFFIX,
    task: (id) => base + DYNAMIC_KEYS.task + id,
    status: (s) => base + DYNAMIC_KEYS.status + s,
  };
}

// ---- keys of the operations (retry, explain, history, query)
// A task's history is the field `_h` of its task hash (lua/lib.lua hist): no key of its own.

/** The idempotency-key hash of a queue (search in query()). */
export function idempotencyHashKey(keys: QueueKeys): string {
  return keys.base + ('idem' satisfies FixedKeyName);
}
