// Above ~400 lines on purpose: this is the one place of every input rule (issue 12: validation
// once): submit inputs, ids and priorities, task type options, limit updates, store options and
// queries share isKey / isIntIn and the class-validator schemas; split, the rules would drift apart.
import { Allow, IsBoolean, IsOptional, ValidateBy, validateSync, type ValidationError as ClassValidatorError } from 'class-validator';
import type { LimitUpdate } from './admission';
import { ValidationError } from './errors';
import type { TaskTypeOptions } from './handler';
import { Messages } from './messages';
import { INT32_MAX, INT32_MIN, MAX_AGING_INTERVAL_MS } from './order-key';
import type { BoostOptions } from './boost';
import { DEFAULT_TENANT_WEIGHT, FAIRNESS_MODES, MAX_TENANT_WEIGHT, MIN_TENANT_WEIGHT, type Fairness } from './fairness';
import { validatePayload } from './payload-validation';
import { MAX_HISTORY_LIMIT } from './history';
import { removeOptionProblem } from './removal';
import { decodeCursor, MAX_QUERY_LIMIT, type ResolvedTaskQuery, type TaskQuery } from './task-query';
import { ALL_STATUSES, type TaskStatus } from './task';

export { DEFAULT_MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH, validatePayload } from './payload-validation';

/**
 * Ids and keys: no control characters (they separate composite keys in stores) and well-formed
 * UTF-16 (a lone surrogate has no UTF-8 form: drivers send U+FFFD instead, so two keys would
 * become one). In `u` mode a surrogate pair is one code point; only a lone one is \p{Cs}.
 */
const KEY_PATTERN = /^[^\u0000-\u001f\u007f\p{Cs}]+$/u;
const KEY_MAX = 255;
const KEY_RULE = 'must be a string of 1-255 characters without control characters or lone UTF-16 surrogates';
/** Longest delay or timeout accepted: 10 years. */
export const MAX_DURATION_MS = 10 * 365 * 24 * 3600 * 1000;

/** What a caller passes to submit(). Priority and tenant must come from the server side. */
export interface SubmitInput<P = unknown> {
  type: string;
  payload?: P;
  priority?: number;
  delayMs?: number;
  timeoutMs?: number | null;
  providerKey?: string;
  accountId?: string;
  tenantId?: string;
  concurrencyKey?: string;
  idempotencyKey?: string;
  maxAttempts?: number;
  /**
   * Deadline boost of this task (DESIGN §7), instead of its type's; null = none even when the type
   * has one. Needs a deadline (timeoutMs here or on the type).
   */
  boost?: BoostOptions | null;
}

/**
 * One constraint per field for the task type options (validated once per registration).
 */
function IsKey(): PropertyDecorator {
  return ValidateBy({
    name: 'isKey',
    validator: {
      validate: (v: unknown) => isKey(v),
      defaultMessage: () => `$property ${KEY_RULE}`,
    },
  });
}

/**
 * Whether `v` is a valid id, key or name: a well-formed string of 1 to `max` (default 255) UTF-16
 * units without control characters.
 */
export function isKey(v: unknown, max = KEY_MAX): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= max && KEY_PATTERN.test(v);
}

/** Whether `v` is an integer from `min` to `max` (both included). */
export function isIntIn(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/**
 * An integer setting: `fallback` when it is undefined (a required one has fallback null), else an
 * integer from `min` to `max`; anything else is a ValidationError naming the setting and the
 * range (`expected` words it).
 */
export function intOption(what: string, v: unknown, fallback: number | null, min: number, max = Number.MAX_SAFE_INTEGER, expected?: string): number {
  if (v === undefined && fallback !== null) return fallback;
  if (isIntIn(v, min, max)) return v;
  const range = expected ?? (max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`);
  throw new ValidationError(Messages.invalidOption(what, v, range), [`${what}: ${range}`]);
}

function IsIntIn(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'isIntIn',
    validator: {
      validate: (v: unknown) => isIntIn(v, min, max),
      defaultMessage: () => `$property must be an integer from ${min} to ${max}`,
    },
  });
}


const BOOST_RULE = `boost must be { beforeDeadlineMs: an integer from 1 to ${MAX_DURATION_MS}, priority: an integer from -2147483648 to 2147483647 }, or null for none`;

/** A boost option: exactly { beforeDeadlineMs, priority } with valid values. */
function boostOk(v: unknown): v is BoostOptions {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const b = v as Record<string, unknown>;
  for (const k in b) if (k !== 'beforeDeadlineMs' && k !== 'priority') return false;
  return isIntIn(b.beforeDeadlineMs, 1, MAX_DURATION_MS) && isIntIn(b.priority, INT32_MIN, INT32_MAX);
}

/**
 * The field rules of a submit input (the payload is checked by validatePayload): `type` required;
 * every other field optional (undefined or null); no unknown field. With `out` null it stops at
 * the first problem and allocates nothing (the hot path); else it lists every problem.
 */
function submitFieldsOk(input: Record<string, unknown>, out: string[] | null): boolean {
  let ok = true;
  const bad = (message: string): boolean => {
    ok = false;
    if (out !== null) out.push(message);
    return out !== null; // keep going only when listing
  };
  if (!isKey(input.type) && !bad(`type ${KEY_RULE}`)) return false;
  for (const k in input) {
    const v = input[k];
    switch (k) {
      case 'type':
      case 'payload':
        continue;
      case 'priority':
        if (v == null || isIntIn(v, INT32_MIN, INT32_MAX) || bad(Messages.priorityRule(v))) continue;
        return false;
      case 'delayMs':
        if (v == null || isIntIn(v, 0, MAX_DURATION_MS) || bad('delayMs must be an integer >= 0 (ms from now)')) continue;
        return false;
      case 'timeoutMs':
        if (v == null || isIntIn(v, 1, MAX_DURATION_MS) || bad('timeoutMs must be an integer >= 1 (ms from now), or null for no deadline')) continue;
        return false;
      case 'maxAttempts':
        if (v == null || isIntIn(v, 1, 1000) || bad('maxAttempts must be an integer from 1 to 1000')) continue;
        return false;
      case 'boost':
        if (v == null || boostOk(v) || bad(BOOST_RULE)) continue;
        return false;
      case 'providerKey':
      case 'accountId':
      case 'tenantId':
      case 'concurrencyKey':
      case 'idempotencyKey':
        if (v == null || isKey(v) || bad(`${k} ${KEY_RULE}`)) continue;
        return false;
      default:
        if (bad(`property ${k} should not exist`)) continue;
        return false;
    }
  }
  return ok;
}

/** Index of the first input that is not an object or whose fields break a rule (payload aside), or -1. */
function firstBadSubmit(inputs: readonly unknown[]): number {
  for (let i = 0; i < inputs.length; i++) {
    const x = inputs[i];
    if (x === null || typeof x !== 'object' || Array.isArray(x) || !submitFieldsOk(x as Record<string, unknown>, null)) return i;
  }
  return -1;
}

class TaskTypeOptionsSchema {
  @IsOptional() @IsKey() providerKey?: string;
  @IsOptional() @IsBoolean() idempotent?: boolean;
  @IsOptional() @IsIntIn(1, 1000) maxAttempts?: number;
  @IsOptional() @IsIntIn(1, MAX_DURATION_MS) timeoutMs?: number;
  @IsOptional() @IsIntIn(INT32_MIN, INT32_MAX) defaultPriority?: number;
  @Allow() backoff?: unknown;
  @IsOptional() @IsIntIn(1, MAX_DURATION_MS) pollIntervalMs?: number;
  @IsOptional() @IsIntIn(1, MAX_DURATION_MS) maxPollIntervalMs?: number;
  @IsOptional() @ValidateBy({ name: 'isBoost', validator: { validate: (v: unknown) => boostOk(v), defaultMessage: () => BOOST_RULE } }) boost?: BoostOptions;
  @Allow() removeOnComplete?: unknown;
  @Allow() removeOnFail?: unknown;
}

const VALIDATE_OPTIONS = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true } as const;

function flatten(errors: ClassValidatorError[], prefix = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = prefix + e.property;
    for (const msg of Object.values(e.constraints ?? {})) out.push(msg.startsWith(path) || msg.startsWith('Invalid') ? msg : `${path}: ${msg}`);
    if (e.children?.length) out.push(...flatten(e.children, path + '.'));
  }
  return out;
}

function fail(details: string[]): never {
  throw new ValidationError(Messages.invalidSubmit(details.join('; ')), details);
}

/**
 * Validates one submit input (its fields once, in plain code: submitFieldsOk; no class-validator
 * run, whose executor, metadata lookups and error objects cost more than the checks themselves
 * on the hot path) and its payload; throws ValidationError listing every problem.
 */
export function validateSubmitInput(input: SubmitInput, maxPayloadBytes: number): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) fail(['the task must be an object']);
  if (!submitFieldsOk(input as unknown as Record<string, unknown>, null)) {
    const details: string[] = [];
    submitFieldsOk(input as unknown as Record<string, unknown>, details);
    fail(details);
  }
  validatePayload(input.payload, maxPayloadBytes);
}

/**
 * Whether the fields of every input of a batch are valid (each input checked once, in plain
 * code). Payloads are not checked here (validatePayload, per input). On false,
 * validateSubmitInput on each input in turn says which is wrong and how.
 */
export function submitFieldsValid(inputs: readonly SubmitInput[]): boolean {
  return firstBadSubmit(inputs) < 0;
}

/** A task id given to get / cancel / changePriority (and every by-id operation); throws ValidationError. */
export function validateTaskId(id: unknown): asserts id is string {
  if (!isKey(id)) throw new ValidationError(Messages.invalidTaskId(id), [`id ${KEY_RULE}`]);
}

/** A priority given to changePriority; throws ValidationError. */
export function validatePriority(priority: unknown): asserts priority is number {
  if (!isIntIn(priority, INT32_MIN, INT32_MAX)) throw new ValidationError(Messages.invalidPriority(priority), [Messages.priorityRule(priority)]);
}

export function validateTaskTypeOptions(type: string, options: TaskTypeOptions): void {
  const details: string[] = [];
  if (!isKey(type)) details.push(`type ${KEY_RULE}`);
  const errors = validateSync(Object.assign(new TaskTypeOptionsSchema(), options), VALIDATE_OPTIONS);
  details.push(...flatten(errors));
  const b = options.backoff as { baseMs?: unknown; maxMs?: unknown } | undefined;
  if (b !== undefined) {
    for (const k of ['baseMs', 'maxMs'] as const) {
      const x = b?.[k];
      if (x !== undefined && !isIntIn(x, 0, MAX_DURATION_MS)) {
        details.push(`backoff.${k} must be an integer >= 0`);
      }
    }
  }
  for (const k of ['removeOnComplete', 'removeOnFail'] as const) {
    const problem = removeOptionProblem(k, (options as Record<string, unknown>)[k]);
    if (problem !== null) details.push(problem);
  }
  if (details.length) {
    throw new ValidationError(`Invalid options of task type "${String(type)}": ${details.join('; ')}.`, details);
  }
}

/** The fields of each kind of limit update (core/admission.ts LimitUpdate). */
const LIMIT_FIELDS: Readonly<Record<LimitUpdate['kind'], readonly string[]>> = {
  provider: ['kind', 'providerKey', 'paused', 'qps', 'burst', 'accountConcurrency'],
  account: ['kind', 'providerKey', 'accountId', 'concurrency'],
  tenant: ['kind', 'tenantId', 'quota'],
  defaultTenant: ['kind', 'quota'],
  concurrencyKey: ['kind', 'key', 'limit'],
  tenantWeight: ['kind', 'tenantId', 'weight'],
};

/** Checks one limit change; throws ValidationError (limits unchanged). Unknown fields are refused, as in submit. */
export function validateLimitUpdate(update: LimitUpdate): void {
  const bad = (what: string, value: unknown, expected: string): never => {
    throw new ValidationError(Messages.invalidLimit(what, value, expected), [`${what}: ${expected}`]);
  };
  const key = (what: string, v: unknown) => {
    if (!isKey(v)) bad(what, v, `a key: ${KEY_RULE.replace('must be ', '')}`);
  };
  const count = (what: string, v: unknown, allowNull = true) => {
    if (v === undefined || (allowNull && v === null)) return;
    if (!isIntIn(v, 0, 1e9)) bad(what, v, 'an integer from 0 to 1e9, or null to remove it');
  };
  if (update === null || typeof update !== 'object' || Array.isArray(update)) bad('update', update, 'an object with a kind');
  const kind = (update as { kind?: unknown }).kind;
  const allowed = typeof kind === 'string' && Object.prototype.hasOwnProperty.call(LIMIT_FIELDS, kind) ? LIMIT_FIELDS[kind as LimitUpdate['kind']] : null;
  if (allowed === null) bad('kind', kind, `one of ${Object.keys(LIMIT_FIELDS).map((k) => `'${k}'`).join(', ')}`);
  const unknown = Object.keys(update).filter((f) => !allowed!.includes(f));
  if (unknown.length) {
    throw new ValidationError(Messages.unknownLimitFields(kind as string, unknown, allowed!), unknown.map((f) => `property ${f} should not exist`));
  }
  switch (update.kind) {
    case 'provider': {
      key('providerKey', update.providerKey);
      if (update.paused !== undefined && typeof update.paused !== 'boolean') bad('paused', update.paused, 'a boolean');
      const q = update.qps;
      if (q !== undefined && q !== null && !(typeof q === 'number' && Number.isFinite(q) && q > 0 && q <= 1e9)) bad('qps', q, 'a number > 0 (submits per second), or null for no rate limit');
      const b = update.burst;
      if (b !== undefined && b !== null && !isIntIn(b, 1, 1e9)) bad('burst', b, 'an integer >= 1, or null for 1');
      count('accountConcurrency', update.accountConcurrency);
      return;
    }
    case 'account':
      key('providerKey', update.providerKey);
      key('accountId', update.accountId);
      count('concurrency', update.concurrency);
      return;
    case 'tenant':
      key('tenantId', update.tenantId);
      count('quota', update.quota);
      return;
    case 'defaultTenant':
      count('quota', update.quota);
      return;
    case 'concurrencyKey':
      key('key', update.key);
      count('limit', update.limit);
      return;
    case 'tenantWeight': {
      key('tenantId', update.tenantId);
      const w = update.weight;
      if (w !== null && !isIntIn(w, MIN_TENANT_WEIGHT, MAX_TENANT_WEIGHT)) bad('weight', w, `an integer from ${MIN_TENANT_WEIGHT} to ${MAX_TENANT_WEIGHT}, or null for the default (${DEFAULT_TENANT_WEIGHT})`);
      return;
    }
  }
}

/** The fairness option of a store or queue: 'tenant', or off (undefined, null, false, 'none'). */
export function validateFairness(v: unknown): Fairness | null {
  if (v === undefined || v === null || v === false || v === 'none') return null;
  if (typeof v === 'string' && (FAIRNESS_MODES as readonly string[]).includes(v)) return v as Fairness;
  throw new ValidationError(Messages.invalidOption('fairness', JSON.stringify(v), `'tenant' (fair share between tenants) or undefined (off)`));
}

/** The order options of a store (fixed for its life): aging and fairness each valid, never both. */
export function validateOrderOptions(options: { agingIntervalMs?: unknown; fairness?: unknown }): { agingIntervalMs: number; fairness: Fairness | null } {
  const agingIntervalMs = validateAgingInterval(options.agingIntervalMs);
  const fairness = validateFairness(options.fairness);
  if (agingIntervalMs > 0 && fairness !== null) throw new ValidationError(Messages.agingWithFairness(agingIntervalMs));
  return { agingIntervalMs, fairness };
}

/** The store option agingIntervalMs: 0 (off, also for undefined or null) to MAX_AGING_INTERVAL_MS. */
export function validateAgingInterval(ms: unknown): number {
  return intOption('agingIntervalMs', ms ?? undefined, 0, 0, MAX_AGING_INTERVAL_MS, `an integer from 0 (off) to ${MAX_AGING_INTERVAL_MS}`);
}

/** The store option historyLimit: 0 (off) to MAX_HISTORY_LIMIT; undefined or null = `fallback`. */
export function validateHistoryLimit(v: unknown, fallback: number): number {
  return intOption('historyLimit', v ?? undefined, fallback, 0, MAX_HISTORY_LIMIT, `an integer from 0 (off) to ${MAX_HISTORY_LIMIT}`);
}

const QUERY_FIELDS = new Set(['status', 'type', 'tenantId', 'providerKey', 'accountId', 'minPriority', 'maxPriority', 'search', 'limit', 'cursor']);

/** Checks a TaskQuery (every problem listed) and decodes its cursor; throws ValidationError. */
export function validateTaskQuery(q: TaskQuery): ResolvedTaskQuery {
  if (q === null || typeof q !== 'object' || Array.isArray(q)) throw new ValidationError(Messages.invalidQuery('the query must be an object'));
  const details: string[] = [];
  for (const k of Object.keys(q)) if (!QUERY_FIELDS.has(k)) details.push(`property ${k} should not exist`);
  if (!ALL_STATUSES.includes(q.status as TaskStatus)) details.push(`status must be one of ${ALL_STATUSES.join(', ')}`);
  for (const k of ['type', 'tenantId', 'providerKey', 'accountId', 'search'] as const) {
    if (q[k] !== undefined && !isKey(q[k])) details.push(`${k} ${KEY_RULE}`);
  }
  for (const k of ['minPriority', 'maxPriority'] as const) {
    if (q[k] !== undefined && !isIntIn(q[k], INT32_MIN, INT32_MAX)) details.push(`${k} must be an integer from ${INT32_MIN} to ${INT32_MAX}`);
  }
  if (!isIntIn(q.limit, 1, MAX_QUERY_LIMIT)) details.push(`limit must be an integer from 1 to ${MAX_QUERY_LIMIT}`);
  if (q.cursor !== undefined && q.cursor !== null && (typeof q.cursor !== 'string' || q.cursor.length > 512)) details.push('cursor must be a string a previous page returned');
  if (details.length) throw new ValidationError(Messages.invalidQuery(details.join('; ')), details);
  const status = q.status as TaskStatus;
  const { cursor, ...rest } = q;
  return { ...rest, status, position: cursor === undefined || cursor === null ? null : decodeCursor(status, cursor) };
}
