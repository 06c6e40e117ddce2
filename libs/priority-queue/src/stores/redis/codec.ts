import { newTaskRecord, TaskStatus, TERMINAL_STATUSES, type NewTask, type Task } from '../../core/task';
import { laneKey } from '../../core/admission';
import { scopeOf } from '../../core/idempotency';
import { DEFAULT_TENANT_WEIGHT, FAIR_QUANTUM, MAX_DOUBLE_FAIR_TAG } from '../../core/fairness';

/**
 * Task hash <-> Task. The properties that never change after create are kept together in the
 * field `d`, a JSON array in DTuple order written as the client sends it (the values the
 * server fixes at create, createdAt, seq and deadlineAt, are fields of their own), so that a claim
 * reads and returns one value instead of a dozen; the scripts read their own copies of the
 * immutable fields they need (providerKey, the admission keys; maxAttempts and idempotent, read
 * only by a recovery sweep, come from the end of `d`).
 * Every other property is one field (numbers as decimal strings, booleans as '1' / '0', result
 * as JSON); a null property is an absent field, and so are attempts / pollErrors /
 * cancelRequested while 0 and updatedAt until the first change; a terminal task may keep the
 * lease fields of its last lease, which mean nothing (it holds no lease), and its updatedAt is
 * its finishedAt (complete.lua does not write updatedAt); `fairTag` (fair share) is kept as the
 * 16 hex digits of the order key and shown on Task as a decimal string. Fields starting with `_`
 * are the store's own (order key, lane id).
 */
export function hashToObject(flat: readonly string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) o[flat[i]] = flat[i + 1];
  return o;
}

const TWO52 = 2 ** 52;
const SEP = '\x1f';

/**
 * The hash of a claimed task as it was before the claim, from claim_submissions.lua's string
 * for it: version, attempts, updatedAt, deadlineAt, boostAt, boostPriority ('' = absent), `d` and the lane member
 * (core/order-key.ts encodeOrderKey .. id; with aging the key starts with 16 more hex digits),
 * joined by \x1f (d is JSON, which escapes it; the member is last), and its error text if any.
 * Priority, runAt, createdAt, seq (and with fair share the fair tag, after the priority) come
 * from the order key, as the server holds them.
 */
export function claimedHash(s: string, error: string | undefined, agingIntervalMs: number, fair = false): Record<string, string> {
  const e1 = s.indexOf(SEP);
  const e2 = s.indexOf(SEP, e1 + 1);
  const e3 = s.indexOf(SEP, e2 + 1);
  const e4 = s.indexOf(SEP, e3 + 1);
  const e5 = s.indexOf(SEP, e4 + 1);
  const e6 = s.indexOf(SEP, e5 + 1);
  const e7 = s.indexOf(SEP, e6 + 1);
  const h: Record<string, string> = { version: s.slice(0, e1), d: s.slice(e6 + 1, e7) };
  if (e2 > e1 + 1) h.attempts = s.slice(e1 + 1, e2);
  if (e3 > e2 + 1) h.updatedAt = s.slice(e2 + 1, e3);
  if (e4 > e3 + 1) h.deadlineAt = s.slice(e3 + 1, e4);
  if (e5 > e4 + 1) h.boostAt = s.slice(e4 + 1, e5);
  if (e6 > e5 + 1) h.boostPriority = s.slice(e5 + 1, e6);
  if (error !== undefined) h.error = error;
  let o = e7 + 1 + (agingIntervalMs > 0 ? 16 : 0);
  h.priority = String(2147483647 - parseInt(s.slice(o, o + 8), 16));
  if (fair) {
    // the fair tag follows the priority (16 hex digits), kept as the hash holds it
    h.fairTag = s.slice(o + 8, o + 24);
    o += 16;
  }
  h.runAt = String(parseInt(s.slice(o + 8, o + 22), 16) - TWO52);
  h.createdAt = String(parseInt(s.slice(o + 22, o + 36), 16) - TWO52);
  h.seq = String(parseInt(s.slice(o + 36, o + 50), 16));
  return h;
}

/**
 * Largest fair tag the Redis store keeps: 2^53 - 1, where the memory store stops too, not core's
 * MAX_FAIR_TAG (2^63 - 1). The scripts compute tags as Lua numbers, which are doubles: exact only
 * up to 2^53. 64-bit integer arithmetic on two limbs would lift it, for a bound reached after 9e9
 * creations of weight 1 at one level of one queue (about 100 days at 1,000 tasks/s); a create or
 * re-tag past it fails with FairTagOverflowError instead of rounding.
 */
export const MAX_REDIS_FAIR_TAG = Number(MAX_DOUBLE_FAIR_TAG);

/** The fair-share constants of core/fairness.ts as the scripts' prelude defines them (lib.lua fair* helpers). */
export const FAIR_LUA_CONSTANTS = `local FAIR_QUANTUM, FAIR_MAX, DEFAULT_TENANT_WEIGHT = ${FAIR_QUANTUM}, ${MAX_REDIS_FAIR_TAG}, ${DEFAULT_TENANT_WEIGHT}`;

/** Task.fairTag (decimal) of the 16 hex digits the scripts keep (core/order-key.ts layout). */
export function fairTagOfHex(hex: string): string {
  return BigInt('0x' + hex).toString();
}

const str = (v: string | undefined): string | null => (v === undefined ? null : v);
const num = (v: string | undefined): number | null => (v === undefined ? null : Number(v));

export function decodeTask(flat: readonly string[]): Task {
  return decodeHash(hashToObject(flat));
}

/**
 * The task of an HGETALL reply, or null for an empty one (no such task). ioredis 6 with
 * `replyMapping: 'resp3'` gives a RESP3 map as a plain object; RESP2 and the default ('legacy')
 * mapping give the flat [field, value, ...] array.
 */
export function taskOfHashReply(reply: unknown): Task | null {
  const h = Array.isArray(reply) ? hashToObject(reply as string[]) : (reply as Record<string, string>);
  return Object.keys(h).length === 0 ? null : decodeHash(h);
}

/**
 * `d` of a new task, the immutable Task properties in DTuple order: create.lua stores it as
 * given. It ends with `,<maxAttempts>,<true|false>]`, which recover_expired.lua reads (the hash
 * has no fields of their own for them).
 */
export function dJson(t: NewTask, payloadJson: string): string {
  const s = JSON.stringify;
  return `[${s(t.id)},${s(t.type)},${payloadJson},${s(t.idempotencyKey)},${s(t.providerKey)},${s(t.accountId)},${s(t.tenantId)},${s(t.concurrencyKey)},${t.maxAttempts},${t.idempotent}]`;
}

type DTuple = [
  id: string,
  type: string,
  payload: unknown,
  idempotencyKey: string | null,
  providerKey: string,
  accountId: string | null,
  tenantId: string | null,
  concurrencyKey: string | null,
  maxAttempts: number,
  idempotent: boolean,
];

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** A task hash (field -> value, as HGETALL gives it) to a fresh Task. */
export function decodeHash(h: Readonly<Record<string, string>>): Task {
  const d = JSON.parse(h.d) as DTuple;
  // complete.lua leaves the lease fields of a task's last lease: a terminal task holds none
  const terminal = TERMINAL.has(h.status);
  return {
    id: d[0],
    idempotencyKey: d[3],
    type: d[1],
    payload: d[2],
    priority: Number(h.priority),
    providerKey: d[4],
    accountId: d[5],
    tenantId: d[6],
    concurrencyKey: d[7],
    runAt: Number(h.runAt),
    deadlineAt: num(h.deadlineAt),
    boostAt: num(h.boostAt),
    boostPriority: num(h.boostPriority),
    fairTag: h.fairTag === undefined ? null : fairTagOfHex(h.fairTag),
    createdAt: Number(h.createdAt),
    seq: Number(h.seq),
    status: h.status as TaskStatus,
    version: Number(h.version),
    attempts: Number(h.attempts ?? 0),
    maxAttempts: d[8],
    idempotent: d[9],
    leaseOwner: terminal ? null : str(h.leaseOwner),
    leaseId: terminal ? null : str(h.leaseId),
    leaseUntil: terminal ? null : num(h.leaseUntil),
    result: h.result === undefined ? null : JSON.parse(h.result),
    error: str(h.error),
    externalId: str(h.externalId),
    nextPollAt: num(h.nextPollAt),
    pollErrors: Number(h.pollErrors ?? 0),
    cancelRequested: h.cancelRequested === '1',
    updatedAt: Number((terminal ? h.finishedAt : h.updatedAt) ?? h.updatedAt ?? h.createdAt),
    finishedAt: num(h.finishedAt),
  };
}

/** Optional string argument of a script: '' = null, '+' .. value otherwise. */
export function optArg(v: string | null | undefined): string {
  return v === null || v === undefined ? '' : '+' + v;
}

/** Like optArg, with '~' for "leave unchanged" (undefined). */
export function changeArg(v: string | number | boolean | null | undefined): string {
  if (v === undefined) return '~';
  if (v === null) return '';
  if (typeof v === 'boolean') return v ? '+1' : '+0';
  return '+' + String(v);
}

export const CREATE_FIELDS_PER_TASK = 13;

export function serializePayload(payload: unknown): string {
  return JSON.stringify(payload === undefined ? null : payload);
}

/** Appends the CREATE_FIELDS_PER_TASK arguments of one task for create.lua to `out`, in its header's order. */
export function pushCreateArgs(out: string[], t: NewTask, payloadJson: string): void {
  out.push(
    t.id,
    optArg(t.idempotencyKey),
    dJson(t, payloadJson),
    String(t.priority),
    t.providerKey,
    optArg(t.accountId),
    optArg(t.tenantId),
    optArg(t.concurrencyKey),
    String(t.delayMs),
    optArg(t.timeoutMs === null ? null : String(t.timeoutMs)),
    laneKey(t),
    t.idempotencyKey === null ? '' : idemScope(t),
    boostArg(t),
  );
}

/** A task's deadline boost for create.lua: '' without one (or without a deadline), else '+W:P'. */
export function boostArg(t: NewTask): string {
  if (t.boost == null || t.timeoutMs === null) return '';
  return `+${t.boost.beforeDeadlineMs}:${t.boost.priority}`;
}

/**
 * What an idempotency key is bound to (core/idempotency.ts), as create.lua compares it and keeps
 * it in the task's field `_i`: type, tenant ('' for none, else '+' .. tenantId) and payload
 * fingerprint, joined by \x1f (which validated keys never contain).
 */
export function idemScope(t: NewTask): string {
  const s = scopeOf(t);
  return s.type + SEP + (s.tenantId === null ? '' : '+' + s.tenantId) + SEP + s.payloadFingerprint;
}

/** The task create.lua wrote for `t` (no read-back needed). */
export function createdTask(t: NewTask, payloadJson: string, now: number, seq: number): Task {
  return newTaskRecord(t, now, seq, JSON.parse(payloadJson) as unknown);
}
