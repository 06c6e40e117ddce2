import { ValidationError } from './errors';
import { Messages } from './messages';
import { TaskStatus, type TerminalStatus } from './task';

/**
 * removeOnComplete / removeOnFail, as BullMQ users know them, per queue and per task type (the
 * type's setting wins; a type without one takes the queue's; without either a finished task is
 * kept until the queue's retentionMs, as before):
 * - `false`: keep (until retentionMs);
 * - `true`: delete the task in the same atomic store step that finishes it;
 * - `n` (an integer >= 0): keep the newest n finished tasks, delete older ones (0 = `true`);
 * - `{ age, count }`: keep tasks finished less than `age` SECONDS ago (BullMQ's unit), and at most
 *   `count` of them (either may be left out).
 * removeOnComplete applies to SUCCEEDED; removeOnFail to every other terminal status (FAILED,
 * TIMED_OUT, CANCELED, SUBMIT_UNKNOWN). A count or an age counts the finished tasks of the same
 * task type and the same side (succeeded / not), newest by finishedAt (tasks finished in the
 * same millisecond: in any order), and is applied in the
 * step that finishes a task of that type (the step deletes at most REMOVAL_TRIM_MAX older
 * tasks; retentionMs still purges anything older).
 * The rule reaches the store with the worker's complete() (CompletionOutcome.remove): terminal
 * transitions the store makes by itself (recovery sweep, a claim's timeouts, a cancel of a
 * pending task) keep the task until retentionMs.
 */
export type RemoveOption = boolean | number | { age?: number; count?: number };

/** The two options of a queue or of a task type. */
export interface RemovalOptions {
  removeOnComplete?: RemoveOption;
  removeOnFail?: RemoveOption;
}

/** A resolved rule, as a store applies it: delete now, or keep within count / age. */
export type RemovalRule =
  | { readonly now: true }
  | {
      readonly now: false;
      /** Newest finished tasks kept per type and side; null = no count. */
      readonly count: number | null;
      /** Kept while finishedAt > now - ageMs; null = no age. */
      readonly ageMs: number | null;
    };

/** Most older tasks one finishing step deletes under a count or an age (BullMQ trims in bounded steps too). */
export const REMOVAL_TRIM_MAX = 1000;

/** Largest count / age accepted (age in seconds: about 31 years). */
export const MAX_REMOVAL_COUNT = 1_000_000_000;
export const MAX_REMOVAL_AGE_S = 1_000_000_000;

const REMOVE_NOW: RemovalRule = { now: true };

const EXPECTED = `true, false, an integer count from 0 to ${MAX_REMOVAL_COUNT}, or { age?: seconds, count?: n } with integers from 0 to ${MAX_REMOVAL_COUNT}`;

function isCount(v: unknown): v is number {
  return Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_REMOVAL_COUNT;
}

/** What is wrong with one option, or null when it is valid (undefined = not set). */
export function removeOptionProblem(where: string, v: unknown): string | null {
  if (v === undefined || typeof v === 'boolean' || isCount(v)) return null;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => k !== 'age' && k !== 'count');
    const ok = extra.length === 0 && (o.age === undefined || isCount(o.age)) && (o.count === undefined || isCount(o.count));
    if (ok && (o.age !== undefined || o.count !== undefined)) return null;
  }
  return `${where} must be ${EXPECTED}`;
}

/** Checks one option (where: e.g. `removeOnComplete of the queue`); ValidationError when wrong. */
export function validateRemoveOption(where: string, v: unknown): void {
  const problem = removeOptionProblem(where, v);
  if (problem !== null) throw new ValidationError(Messages.invalidRemoveOption(where, v, EXPECTED), [problem]);
}

/** Checks both options of a queue (whose: e.g. `the queue`); ValidationError when one is wrong. */
export function validateRemovalOptions(o: RemovalOptions, whose: string): void {
  validateRemoveOption(`removeOnComplete of ${whose}`, o.removeOnComplete);
  validateRemoveOption(`removeOnFail of ${whose}`, o.removeOnFail);
}

/** The rule of a valid option; null = keep until retentionMs. */
export function removalRule(v: RemoveOption | undefined): RemovalRule | null {
  if (v === undefined || v === false) return null;
  if (v === true || v === 0) return REMOVE_NOW;
  if (typeof v === 'number') return { now: false, count: v, ageMs: null };
  if (v.count === 0 || v.age === 0) return REMOVE_NOW;
  return { now: false, count: v.count ?? null, ageMs: v.age === undefined ? null : v.age * 1000 };
}

/** The side a terminal status counts on: SUCCEEDED is removeOnComplete's, the others removeOnFail's. */
export function removalSide(status: TerminalStatus | TaskStatus): 'ok' | 'fail' {
  return status === TaskStatus.SUCCEEDED ? 'ok' : 'fail';
}

/** Resolved rules of one task type: its own options over the queue's. */
export interface ResolvedRemoval {
  onComplete: RemovalRule | null;
  onFail: RemovalRule | null;
}

export function resolveRemoval(type: RemovalOptions, queue: RemovalOptions): ResolvedRemoval {
  return {
    onComplete: removalRule(type.removeOnComplete !== undefined ? type.removeOnComplete : queue.removeOnComplete),
    onFail: removalRule(type.removeOnFail !== undefined ? type.removeOnFail : queue.removeOnFail),
  };
}

/** The rule for a task of these rules finishing with `status`. */
export function ruleFor(r: ResolvedRemoval, status: TaskStatus): RemovalRule | null {
  return status === TaskStatus.SUCCEEDED ? r.onComplete : r.onFail;
}
