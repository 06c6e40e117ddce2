import { newTaskRecord, TaskStatus, type NewTask, type Task } from '../../core/task';
import { laneKey } from '../../core/admission';

/**
 * Task hash <-> Task. The hash holds one field per Task property (numbers as decimal strings,
 * booleans as '1' / '0', payload and result as JSON); a null property is an absent field, and
 * so are attempts / pollErrors / cancelRequested while 0 and updatedAt until the first change.
 * Fields starting with `_` are the store's own (order key, lane id).
 */
export function hashToObject(flat: readonly string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) o[flat[i]] = flat[i + 1];
  return o;
}

const str = (v: string | undefined): string | null => (v === undefined ? null : v);
const num = (v: string | undefined): number | null => (v === undefined ? null : Number(v));

export function decodeTask(flat: readonly string[]): Task {
  return decodeHash(hashToObject(flat));
}

/** A task hash (field -> value, as HGETALL gives it) to a fresh Task. */
export function decodeHash(h: Readonly<Record<string, string>>): Task {
  return {
    id: h.id,
    idempotencyKey: str(h.idempotencyKey),
    type: h.type,
    payload: h.payload === undefined ? null : JSON.parse(h.payload),
    priority: Number(h.priority),
    providerKey: h.providerKey,
    accountId: str(h.accountId),
    tenantId: str(h.tenantId),
    concurrencyKey: str(h.concurrencyKey),
    runAt: Number(h.runAt),
    deadlineAt: num(h.deadlineAt),
    createdAt: Number(h.createdAt),
    seq: Number(h.seq),
    status: h.status as TaskStatus,
    version: Number(h.version),
    attempts: Number(h.attempts ?? 0),
    maxAttempts: Number(h.maxAttempts),
    idempotent: h.idempotent === '1',
    leaseOwner: str(h.leaseOwner),
    leaseId: str(h.leaseId),
    leaseUntil: num(h.leaseUntil),
    result: h.result === undefined ? null : JSON.parse(h.result),
    error: str(h.error),
    externalId: str(h.externalId),
    nextPollAt: num(h.nextPollAt),
    pollErrors: Number(h.pollErrors ?? 0),
    cancelRequested: h.cancelRequested === '1',
    updatedAt: Number(h.updatedAt ?? h.createdAt),
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

export const CREATE_FIELDS_PER_TASK = 14;

export function serializePayload(payload: unknown): string {
  return JSON.stringify(payload === undefined ? null : payload);
}

/** Arguments of one task for create.lua, in its header's order. */
export function createArgs(t: NewTask, payloadJson: string): string[] {
  return [
    t.id,
    optArg(t.idempotencyKey),
    t.type,
    payloadJson,
    String(t.priority),
    t.providerKey,
    optArg(t.accountId),
    optArg(t.tenantId),
    optArg(t.concurrencyKey),
    String(t.delayMs),
    optArg(t.timeoutMs === null ? null : String(t.timeoutMs)),
    String(t.maxAttempts),
    t.idempotent ? '1' : '0',
    laneKey(t),
  ];
}

/** The task create.lua wrote for `t` (no read-back needed). */
export function createdTask(t: NewTask, payloadJson: string, now: number, seq: number): Task {
  return newTaskRecord(t, now, seq, JSON.parse(payloadJson) as unknown);
}
