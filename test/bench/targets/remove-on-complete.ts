import type { TaskTypeOptions } from '../../../libs/priority-queue/src/core/handler';

/**
 * The bench's hook for `removeOnComplete` (issue 15 §1: finished tasks deleted in the step that
 * finishes them, as BullMQ users know it: `true`, a count to keep, or `{ age, count }`;
 * core/removal.ts). The bench passes it as a task type option (a queue option works the same way
 * for the bench, which has one queue and one task type per namespace).
 *
 * Our `<store>+roc` targets (targets/index.ts, run only when named in --targets) pass it, so one
 * table shows each store with it off (`ours-redis`) and on (`ours-redis+roc`). The value comes
 * from BENCH_REMOVE_ON_COMPLETE: `true` (default), a number, or JSON such as
 * `{"age":3600,"count":1000}`.
 */
export type RemoveOnComplete = boolean | number | { age?: number; count?: number };

export function removeOnCompleteFromEnv(): RemoveOnComplete {
  const raw = (process.env.BENCH_REMOVE_ON_COMPLETE ?? 'true').trim();
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  const ok =
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isInteger(value) && value >= 0) ||
    (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).every((k) => k === 'age' || k === 'count'));
  if (!ok) throw new Error(`BENCH_REMOVE_ON_COMPLETE=${raw}: expected true, false, a count, or {"age":seconds,"count":n}`);
  return value as RemoveOnComplete;
}

/** Task type options carrying the setting ({} when the target keeps the library's default). */
export function removeOnCompleteSetting(value: RemoveOnComplete | undefined): TaskTypeOptions {
  if (value === undefined) return {};
  return { removeOnComplete: value } as TaskTypeOptions;
}

/** Says plainly why a `+roc` target could not run (e.g. an older checkout without the option, as a before tree). */
export function explainUnsupported(value: RemoveOnComplete | undefined, error: unknown): Error {
  const message = (error as Error)?.message ?? String(error);
  if (value === undefined) return error as Error;
  return new Error(`removeOnComplete is not accepted by this version of the library yet (issue 15 §1): ${message.split('\n')[0]}`);
}
