import { createHash } from 'node:crypto';
import { KEY_SEPARATOR, laneKey } from '../../core/admission';
import type { Task, TaskStatus } from '../../core/task';
import type { Row } from './db';

/**
 * Every column of a task row, in one SELECT list. The last three are DESIGN §7's: k2 (the fair
 * tag on a queue with fairness, order-columns.ts), boost_at, boost_priority.
 */
export const TASK_COLUMNS =
  'seq, id, idempotency_key, type, payload, priority, run_at, deadline_at, created_at, status, staged, lane_key, provider_key, account_id, tenant_id, concurrency_key, version, attempts, max_attempts, idempotent, lease_owner, lease_id, lease_until, result, error, external_id, next_poll_at, poll_errors, cancel_requested, updated_at, finished_at, k2, boost_at, boost_priority';

/** pg returns bigint as string, mysql2 too (bigNumberStrings), better-sqlite3 as number. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}

export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}

export function strOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

/** A bigint column (number from better-sqlite3 when it fits a double, else bigint; string from pg / mysql2) as a decimal string. */
export function fairTagOf(v: unknown): string {
  return typeof v === 'bigint' ? v.toString() : typeof v === 'number' ? BigInt(v).toString() : String(v);
}

export function toJson(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return JSON.stringify(v);
}

function fromJson(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  return JSON.parse(String(v));
}

/**
 * A task row as Task. `fair`: the queue has fairness (StoreContext.fair), so k2 is the task's
 * fair tag (shown as a decimal string); else fairTag is null.
 */
export function rowToTask(r: Row, fair: boolean): Task {
  return {
    id: String(r.id),
    idempotencyKey: strOrNull(r.idempotency_key),
    type: String(r.type),
    payload: fromJson(r.payload),
    priority: num(r.priority),
    providerKey: String(r.provider_key),
    accountId: strOrNull(r.account_id),
    tenantId: strOrNull(r.tenant_id),
    concurrencyKey: strOrNull(r.concurrency_key),
    runAt: num(r.run_at),
    deadlineAt: numOrNull(r.deadline_at),
    boostAt: numOrNull(r.boost_at),
    boostPriority: numOrNull(r.boost_priority),
    fairTag: fair ? fairTagOf(r.k2) : null,
    createdAt: num(r.created_at),
    seq: num(r.seq),
    status: String(r.status) as TaskStatus,
    version: num(r.version),
    attempts: num(r.attempts),
    maxAttempts: num(r.max_attempts),
    idempotent: num(r.idempotent) === 1,
    leaseOwner: strOrNull(r.lease_owner),
    leaseId: strOrNull(r.lease_id),
    leaseUntil: numOrNull(r.lease_until),
    result: fromJson(r.result),
    error: strOrNull(r.error),
    externalId: strOrNull(r.external_id),
    nextPollAt: numOrNull(r.next_poll_at),
    pollErrors: num(r.poll_errors),
    cancelRequested: num(r.cancel_requested) === 1,
    updatedAt: num(r.updated_at),
    finishedAt: numOrNull(r.finished_at),
  };
}

/** Fixed-length id of a lane (sha1 of core's laneKey), the lanes table's key. */
export function laneId(t: Pick<Task, 'providerKey' | 'accountId' | 'tenantId' | 'concurrencyKey'>): string {
  const key = laneKey(t);
  let id = laneIds.get(key);
  if (id === undefined) {
    if (laneIds.size >= 10_000) laneIds.clear();
    id = createHash('sha1').update(key).digest('hex');
    laneIds.set(key, id);
  }
  return id;
}

/** Recently used lane ids (a batch usually has few lanes; sha1 per task was a visible cost). */
const laneIds = new Map<string, string>();

/** Keys of the resources table. */
export const rk = {
  provider: (p: string) => `p:${p}`,
  account: (p: string, a: string) => `a:${p}${KEY_SEPARATOR}${a}`,
  tenant: (t: string) => `t:${t}`,
  defaultTenant: () => 'd:',
  concurrencyKey: (k: string) => `c:${k}`,
};

export interface LaneKeys {
  provider_key: string;
  account_id: string | null;
  tenant_id: string | null;
  concurrency_key: string | null;
}

/** Resources whose slots a task of this lane holds while in flight. */
export function slotKeys(l: LaneKeys): string[] {
  const out: string[] = [];
  if (l.account_id !== null) out.push(rk.account(l.provider_key, l.account_id));
  if (l.tenant_id !== null) out.push(rk.tenant(l.tenant_id));
  if (l.concurrency_key !== null) out.push(rk.concurrencyKey(l.concurrency_key));
  return out;
}

export function laneKeysOf(r: Row): LaneKeys {
  return {
    provider_key: String(r.provider_key),
    account_id: strOrNull(r.account_id),
    tenant_id: strOrNull(r.tenant_id),
    concurrency_key: strOrNull(r.concurrency_key),
  };
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
