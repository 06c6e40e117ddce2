import { Allow, IsBoolean, IsOptional, ValidateBy, validateSync, type ValidationError as ClassValidatorError } from 'class-validator';
import type { LimitUpdate } from './admission';
import { ValidationError } from './errors';
import type { TaskTypeOptions } from './handler';
import { Messages } from './messages';
import { INT32_MAX, INT32_MIN, MAX_AGING_INTERVAL_MS } from './order-key';

/** Ids and keys: printable, no control characters (they separate composite keys in stores). */
const KEY_PATTERN = /^[^\u0000-\u001f\u007f]+$/;
const KEY_MAX = 255;
/** Longest delay or timeout accepted: 10 years. */
export const MAX_DURATION_MS = 10 * 365 * 24 * 3600 * 1000;
export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;

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
}

/**
 * One constraint per field (not a chain of four): class-validator's cost grows with the number
 * of constraints, and submit validates every task.
 */
function IsKey(): PropertyDecorator {
  return ValidateBy({
    name: 'isKey',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= KEY_MAX && KEY_PATTERN.test(v),
      defaultMessage: () => '$property must be 1-255 printable characters without control characters',
    },
  });
}

function IsIntIn(min: number, max: number, message?: string): PropertyDecorator {
  return ValidateBy({
    name: 'isIntIn',
    validator: {
      validate: (v: unknown) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max,
      defaultMessage: () => message ?? `$property must be an integer from ${min} to ${max}`,
    },
  });
}

/** class-validator schema of SubmitInput; an instance is filled by Object.assign, validated once. */
class SubmitInputSchema {
  @IsKey() type!: string;
  @Allow() payload?: unknown;
  @IsOptional() @IsIntIn(INT32_MIN, INT32_MAX, Messages.invalidPriority('$value')) priority?: number;
  @IsOptional() @IsIntIn(0, MAX_DURATION_MS, 'delayMs must be an integer >= 0 (ms from now)') delayMs?: number;
  @IsOptional()
  @IsIntIn(1, MAX_DURATION_MS, 'timeoutMs must be an integer >= 1 (ms from now), or null for no deadline')
  timeoutMs?: number | null;
  @IsOptional() @IsKey() providerKey?: string;
  @IsOptional() @IsKey() accountId?: string;
  @IsOptional() @IsKey() tenantId?: string;
  @IsOptional() @IsKey() concurrencyKey?: string;
  @IsOptional() @IsKey() idempotencyKey?: string;
  @IsOptional() @IsIntIn(1, 1000) maxAttempts?: number;
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

/** Validates one submit input (once) and its payload; throws ValidationError; returns the JSON size. */
export function validateSubmitInput(input: SubmitInput, maxPayloadBytes: number): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) fail(['the task must be an object']);
  const errors = validateSync(Object.assign(new SubmitInputSchema(), input), VALIDATE_OPTIONS);
  if (errors.length) fail(flatten(errors));
  validatePayload(input.payload, maxPayloadBytes);
}

/** A payload must round-trip through JSON unchanged: plain data only, finite numbers, no cycles. */
export function validatePayload(payload: unknown, maxPayloadBytes: number): void {
  const problem = jsonProblem(payload, 'payload', new Set());
  if (problem) throw new ValidationError(Messages.payloadNotJson(problem), [problem]);
  if (payload === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
  if (bytes > maxPayloadBytes) {
    throw new ValidationError(Messages.payloadTooLarge(bytes, maxPayloadBytes), ['payload: too large']);
  }
}

function jsonProblem(v: unknown, path: string, seen: Set<object>): string | null {
  switch (typeof v) {
    case 'undefined':
      return path === 'payload' ? null : `${path} is undefined`;
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(v) ? null : `${path} is ${v}`;
    case 'bigint':
      return `${path} is a BigInt`;
    case 'function':
      return `${path} is a function`;
    case 'symbol':
      return `${path} is a symbol`;
  }
  if (v === null) return null;
  const obj = v as object;
  if (seen.has(obj)) return `${path} is a circular reference`;
  if (Array.isArray(obj)) {
    seen.add(obj);
    for (let i = 0; i < obj.length; i++) {
      const p = jsonProblem(obj[i], `${path}[${i}]`, seen);
      if (p) return p;
    }
    seen.delete(obj);
    return null;
  }
  const proto = Object.getPrototypeOf(obj);
  if (proto !== Object.prototype && proto !== null) {
    return `${path} is a ${obj.constructor?.name ?? 'non-plain object'} (not a plain object)`;
  }
  seen.add(obj);
  for (const key of Object.keys(obj)) {
    const p = jsonProblem((obj as Record<string, unknown>)[key], `${path}.${key}`, seen);
    if (p) return p;
  }
  seen.delete(obj);
  return null;
}

export function validateTaskTypeOptions(type: string, options: TaskTypeOptions): void {
  const details: string[] = [];
  if (typeof type !== 'string' || !type || type.length > KEY_MAX || !KEY_PATTERN.test(type)) {
    details.push('type must be 1-255 printable characters without control characters');
  }
  const errors = validateSync(Object.assign(new TaskTypeOptionsSchema(), options), VALIDATE_OPTIONS);
  details.push(...flatten(errors));
  const b = options.backoff as { baseMs?: unknown; maxMs?: unknown } | undefined;
  if (b !== undefined) {
    for (const k of ['baseMs', 'maxMs'] as const) {
      const x = b?.[k];
      if (x !== undefined && !(Number.isInteger(x) && (x as number) >= 0 && (x as number) <= MAX_DURATION_MS)) {
        details.push(`backoff.${k} must be an integer >= 0`);
      }
    }
  }
  if (details.length) {
    throw new ValidationError(`Invalid options of task type "${String(type)}": ${details.join('; ')}.`, details);
  }
}

/** Checks one limit change; throws ValidationError (limits unchanged). */
export function validateLimitUpdate(update: LimitUpdate): void {
  const bad = (what: string, value: unknown, expected: string): never => {
    throw new ValidationError(Messages.invalidLimit(what, value, expected), [`${what}: ${expected}`]);
  };
  const key = (what: string, v: unknown) => {
    if (typeof v !== 'string' || !v || v.length > KEY_MAX || !KEY_PATTERN.test(v)) bad(what, v, 'a non-empty key without control characters');
  };
  const count = (what: string, v: unknown, allowNull = true) => {
    if (v === undefined || (allowNull && v === null)) return;
    if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 1_000_000_000) bad(what, v, 'an integer from 0 to 1e9, or null to remove it');
  };
  if (!update || typeof update !== 'object') bad('update', update, 'an object with a kind');
  switch (update.kind) {
    case 'provider': {
      key('providerKey', update.providerKey);
      if (update.paused !== undefined && typeof update.paused !== 'boolean') bad('paused', update.paused, 'a boolean');
      const q = update.qps;
      if (q !== undefined && q !== null && !(typeof q === 'number' && Number.isFinite(q) && q > 0 && q <= 1e9)) bad('qps', q, 'a number > 0 (submits per second), or null for no rate limit');
      const b = update.burst;
      if (b !== undefined && b !== null && !(Number.isInteger(b) && b >= 1 && b <= 1e9)) bad('burst', b, 'an integer >= 1, or null for 1');
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
    default:
      bad('kind', (update as { kind?: unknown }).kind, "one of 'provider', 'account', 'tenant', 'defaultTenant', 'concurrencyKey'");
  }
}

export function validateAgingInterval(ms: unknown): number {
  if (ms === undefined || ms === null || ms === 0) return 0;
  if (!Number.isInteger(ms) || (ms as number) < 0 || (ms as number) > MAX_AGING_INTERVAL_MS) {
    throw new ValidationError(Messages.invalidOption('agingIntervalMs', ms, `an integer from 0 (off) to ${MAX_AGING_INTERVAL_MS}`));
  }
  return ms as number;
}
