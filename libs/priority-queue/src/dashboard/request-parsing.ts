import type { LimitUpdate } from '../core/admission';
import { ValidationError } from '../core/errors';
import { Messages } from '../core/messages';
import { INT32_MAX, INT32_MIN } from '../core/order-key';
import { TaskStatus } from '../core/task';
import type { TaskQuery } from '../core/task-query';
import { isIntIn, isKey } from '../core/validation';

/**
 * Turns query strings and JSON bodies of the dashboard API into typed requests. Anything
 * unexpected is a ValidationError (400) that says what was wrong; nothing is guessed.
 */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

const bad = (what: string, value: unknown, expected: string): never => {
  throw new ValidationError(Messages.dashboardBadParam(what, value, expected), [`${what}: ${expected}`]);
};

function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') return bad(name, v, 'one value');
  return v;
}

function intParam(query: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const v = single(query, name);
  if (v === undefined) return undefined;
  const n = /^-?\d+$/.test(v) ? Number(v) : NaN;
  if (!isIntIn(n, min, max)) bad(name, v, `an integer from ${min} to ${max}`);
  return n;
}

const QUERY_PARAMS = new Set(['status', 'type', 'tenantId', 'providerKey', 'accountId', 'minPriority', 'maxPriority', 'search', 'limit', 'cursor']);

/**
 * GET .../tasks?status=&type=&tenantId=&providerKey=&accountId=&minPriority=&maxPriority=&search=&limit=&cursor=
 * Only the query-string form is checked here (one value each, integers); the values themselves
 * are checked by TaskManager.query (validateTaskQuery).
 */
export function parseTaskQuery(query: Record<string, unknown>): TaskQuery {
  for (const k of Object.keys(query)) if (!QUERY_PARAMS.has(k)) bad('parameter', k, [...QUERY_PARAMS].join(', '));
  const out: TaskQuery = { status: (single(query, 'status') ?? TaskStatus.PENDING_SUBMIT) as TaskStatus, limit: intParam(query, 'limit', 1, MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE };
  for (const k of ['type', 'tenantId', 'providerKey', 'accountId', 'search', 'cursor'] as const) {
    const v = single(query, k);
    if (v !== undefined) out[k] = v;
  }
  const min = intParam(query, 'minPriority', INT32_MIN, INT32_MAX);
  const max = intParam(query, 'maxPriority', INT32_MIN, INT32_MAX);
  if (min !== undefined) out.minPriority = min;
  if (max !== undefined) out.maxPriority = max;
  if (min !== undefined && max !== undefined && min > max) bad('priority range', `${min}..${max}`, 'minPriority <= maxPriority');
  return out;
}

export function parseTaskId(id: unknown): string {
  if (!isKey(id)) bad('task id', id, '1 to 255 characters without control characters');
  return id as string;
}

/** POST .../priority { priority }: the range check itself is the queue's (Messages.invalidPriority). */
export function parsePriorityBody(body: unknown): number {
  const b = objectBody(body, ['priority']);
  if (b.priority === undefined) bad('body', body, '{ "priority": <integer> }');
  return b.priority as number;
}

const LIMIT_FIELDS: Record<LimitUpdate['kind'], readonly string[]> = {
  provider: ['providerKey', 'paused', 'qps', 'burst', 'accountConcurrency'],
  account: ['providerKey', 'accountId', 'concurrency'],
  tenant: ['tenantId', 'quota'],
  defaultTenant: ['quota'],
  concurrencyKey: ['key', 'limit'],
  tenantWeight: ['tenantId', 'weight'],
};

/** PATCH .../limits: one LimitUpdate; the values themselves are checked by AdmissionGuard. */
export function parseLimitBody(body: unknown): LimitUpdate {
  const kind = (body as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !Object.prototype.hasOwnProperty.call(LIMIT_FIELDS, kind)) {
    bad('kind', kind, Object.keys(LIMIT_FIELDS).join(', '));
  }
  const fields = LIMIT_FIELDS[kind as LimitUpdate['kind']];
  const b = objectBody(body, ['kind', ...fields]);
  // a provider change names the provider and at least one setting; every other kind, all its fields
  const missing = (kind === 'provider' ? ['providerKey'] : fields).filter((f) => !(f in b));
  if (kind === 'provider' && fields.slice(1).every((f) => !(f in b))) missing.push(`one of ${fields.slice(1).join(', ')}`);
  if (missing.length) bad('limit change', body, `the field(s) ${missing.join(', ')} too (null removes a limit)`);
  return b as unknown as LimitUpdate;
}

function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) bad('body', body, 'a JSON object');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!allowed.includes(k)) bad('field', k, allowed.join(', '));
  return b;
}
