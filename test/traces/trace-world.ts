/**
 * The world of the scheduling traces (test/traces): task types with real handlers, the key
 * alphabets (hundreds of lanes, with near-duplicate keys that only differ in case, Unicode
 * normalisation form or trailing spaces), and a seeded generator of op lists replayed through the public API.
 *
 * Time: every clock move and every duration is a multiple of U (one minute of store time), so a
 * deadline is either past at a claim or at least U ahead of it: the worker's deadline timers
 * (real time, a few ms of drift) can never decide a trace.
 */
import { INT32_MAX, INT32_MIN, type LimitUpdate } from '../../libs/priority-queue/src/core';
import { rng } from '../contract/harness';

export const U = 60_000;
export const LEASE_MS = 1000 * U;

export const PROVIDERS = ['p0', 'p1', 'p2', 'p3', 'p4', 'P0', 'p0 '] as const;
export const ACCOUNTS = [null, null, 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'A0', 'a0 '] as const;
/** 'é' composed (NFC) and decomposed (NFD) are two tenants; so are 't0' and 't0 '. */
export const TENANTS = [null, null, 't0', 't1', 't2', 't3', 't4', '\u00e9', 'e\u0301', 't0 '] as const;
export const KEYS = [null, null, null, null, 'k0', 'k1', 'k2', 'k3', 'K0', 'k0 '] as const;

/**
 * Task types (handlers in trace-runner.ts):
 * - once: one-shot, succeeds;
 * - prov: provider handler, in flight until the provider says done (op `finish`), cancel hook;
 * - flaky: one-shot, idempotent, fails its first `fails` attempts (maxAttempts 3, back-off U..8U);
 * - blind: one-shot, not idempotent: `mode` ok, never (NotSubmittedError, retry after U) or
 *   unknown (SUBMIT_UNKNOWN).
 */
export type TaskKind = 'once' | 'prov' | 'flaky' | 'blind';

export interface SubmitSpec {
  type: TaskKind;
  priority: number;
  delayMs: number;
  timeoutMs: number | null;
  providerKey: string;
  accountId: string | null;
  tenantId: string | null;
  concurrencyKey: string | null;
  /** Index into the idempotency key pool; null = none. */
  idem: number | null;
  /** Reusing a held key: copy the holder's type, tenant and payload (else a conflict is likely). */
  sameAsHolder: boolean;
  fails: number;
  mode: 'ok' | 'never' | 'unknown';
}

/** Which task a cancel / changePriority aims at. */
export type Aim = 'head' | 'pending' | 'inflight' | 'any';

export type TraceOp =
  | { kind: 'submit'; specs: SubmitSpec[]; many: boolean }
  | { kind: 'limit'; update: LimitUpdate }
  | { kind: 'cancel'; aim: Aim; pick: number }
  | { kind: 'changePriority'; aim: Aim; pick: number; priority: number }
  | { kind: 'finish'; count: number; pick: number }
  | { kind: 'advance'; units: number }
  | { kind: 'step'; ticks: number };

export interface WorldOptions {
  /** Ops per trace. */
  ops: number;
  /** Tasks of the opening backlog (one submitMany). */
  backlog: number;
}

type Rand = (n: number) => number;

function pickOf<T>(r: Rand, xs: readonly T[]): T {
  return xs[r(xs.length)];
}

function int32(r: Rand): number {
  const x = r(10);
  if (x < 4) return r(7) - 3;
  if (x < 6) return pickOf(r, [INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX]);
  // uniform over the whole range (two draws: rng gives 32 bits at most)
  return Math.max(INT32_MIN, Math.min(INT32_MAX, r(2 ** 16) * 2 ** 16 + r(2 ** 16) - 2 ** 31));
}

function submitSpec(r: Rand): SubmitSpec {
  const x = r(100);
  const type: TaskKind = x < 40 ? 'once' : x < 80 ? 'prov' : x < 92 ? 'flaky' : 'blind';
  return {
    type,
    priority: int32(r),
    delayMs: r(10) < 7 ? 0 : U * pickOf(r, [1, 2, 5]),
    timeoutMs: r(10) < 8 ? null : U * pickOf(r, [1, 3, 10]),
    providerKey: pickOf(r, PROVIDERS),
    accountId: pickOf(r, ACCOUNTS),
    tenantId: pickOf(r, TENANTS),
    concurrencyKey: pickOf(r, KEYS),
    idem: r(10) === 0 ? r(40) : null,
    sameAsHolder: r(10) < 8,
    fails: r(3),
    mode: pickOf(r, ['ok', 'ok', 'never', 'unknown'] as const),
  };
}

function limitUpdate(r: Rand): LimitUpdate {
  const p = pickOf(r, PROVIDERS);
  const small = () => pickOf(r, [null, 0, 1, 1, 2, 3]);
  switch (r(9)) {
    case 0:
    case 1:
      return { kind: 'provider', providerKey: p, paused: r(2) === 0 };
    case 2:
      return { kind: 'provider', providerKey: p, qps: pickOf(r, [null, null, 0.02, 0.05, 1]), burst: pickOf(r, [null, 1, 3]) };
    case 3:
      return { kind: 'provider', providerKey: p, accountConcurrency: small() };
    case 4:
      return { kind: 'account', providerKey: p, accountId: pickOf(r, ACCOUNTS.filter((a) => a !== null)) as string, concurrency: small() };
    case 5:
      return { kind: 'tenant', tenantId: pickOf(r, TENANTS.filter((t) => t !== null)) as string, quota: small() };
    case 6:
      return { kind: 'defaultTenant', quota: pickOf(r, [null, null, 2, 4]) };
    default:
      return { kind: 'concurrencyKey', key: pickOf(r, KEYS.filter((k) => k !== null)) as string, limit: pickOf(r, [null, 0, 1, 2, 3]) };
  }
}

function aim(r: Rand): Aim {
  return pickOf(r, ['head', 'head', 'pending', 'inflight', 'any'] as const);
}

function op(r: Rand): TraceOp {
  const x = r(100);
  if (x < 14) return { kind: 'submit', specs: [submitSpec(r)], many: false };
  if (x < 19) return { kind: 'submit', specs: Array.from({ length: 2 + r(40) }, () => submitSpec(r)), many: true };
  if (x < 29) return { kind: 'limit', update: limitUpdate(r) };
  if (x < 35) return { kind: 'cancel', aim: aim(r), pick: r(1 << 30) };
  if (x < 42) return { kind: 'changePriority', aim: aim(r), pick: r(1 << 30), priority: int32(r) };
  if (x < 52) return { kind: 'finish', count: 1 + r(6), pick: r(1 << 30) };
  if (x < 60) return { kind: 'advance', units: pickOf(r, [1, 1, 2, 5]) };
  return { kind: 'step', ticks: 1 + r(12) };
}

/** The op list of one trace: some limits, a backlog, then random ops. */
export function generateTrace(seed: number, opts: WorldOptions): TraceOp[] {
  const r = rng(seed);
  const ops: TraceOp[] = [];
  for (let i = 0; i < 6; i++) ops.push({ kind: 'limit', update: limitUpdate(r) });
  ops.push({ kind: 'submit', specs: Array.from({ length: opts.backlog }, () => submitSpec(r)), many: true });
  while (ops.length < opts.ops) ops.push(op(r));
  return ops;
}
