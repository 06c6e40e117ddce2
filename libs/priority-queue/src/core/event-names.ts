import { isTerminal, TaskStatus } from './task';

/**
 * Names of task transitions, as @OnTaskEvent and cluster subscribers use them: the new status in
 * lower case, except that a task's creation is `created` and a return to PENDING_SUBMIT (a retry,
 * a recovered lease, a released prefetch) is `requeued`. Two groups: `terminal` (any terminal
 * status) and `transition` (every transition). `boosted` is a deadline boost (DESIGN §7): a
 * priority change, not a status transition, so neither group includes it.
 */
export const TASK_EVENT_NAMES = [
  'created',
  'requeued',
  'submitting',
  'submitted',
  'running',
  'succeeded',
  'failed',
  'canceled',
  'timed_out',
  'submit_unknown',
  'boosted',
  'terminal',
  'transition',
] as const;

export type TaskEventName = (typeof TASK_EVENT_NAMES)[number];

/** The specific name of one transition (never a group name). */
export function taskEventName(from: TaskStatus | null, to: TaskStatus, boosted = false): TaskEventName {
  if (boosted) return 'boosted';
  if (from === null) return 'created';
  if (to === TaskStatus.PENDING_SUBMIT) return 'requeued';
  return to.toLowerCase() as TaskEventName;
}

/** Whether a transition is one of `names` (group names included). */
export function matchesEventName(names: readonly TaskEventName[], from: TaskStatus | null, to: TaskStatus, boosted = false): boolean {
  if (boosted) return names.includes('boosted');
  for (const n of names) {
    if (n === 'transition') return true;
    if (n === 'terminal' ? isTerminal(to) : n === taskEventName(from, to)) return true;
  }
  return false;
}

export function isTaskEventName(v: unknown): v is TaskEventName {
  return typeof v === 'string' && (TASK_EVENT_NAMES as readonly string[]).includes(v);
}
