import { SetMetadata } from '@nestjs/common';
import { isTaskEventName, TASK_EVENT_NAMES, type TaskEventName } from '../core/event-names';
import type { TaskEvent } from '../core/events';
import type { TransitionMessage } from '../core/event-transport.port';
import { ConfigurationError } from '../core/errors';
import { Messages } from '../core/messages';
import { ON_TASK_EVENT_METADATA } from './priority-queue.constants';

export interface OnTaskEventOptions {
  /** Only this queue's (or these queues') transitions; default: every queue. */
  queue?: string | readonly string[];
  /** Only tasks of this type (or these types). */
  type?: string | readonly string[];
  /**
   * `local` (default): transitions made by THIS process, with the task as written
   * (QueueTaskEvent). `cluster`: transitions made by any process on the same store, this one
   * included, without the task (ClusterTaskEvent; read it with get() when needed); at most once.
   */
  scope?: 'local' | 'cluster';
}

/** A transition made by this process (scope `local`). */
export interface QueueTaskEvent extends TaskEvent {
  queue: string;
  /** The specific event name (`created`, `succeeded`, ...; never a group). */
  name: TaskEventName;
}

/** A transition made by any process (scope `cluster`). */
export interface ClusterTaskEvent extends TransitionMessage {
  queue: string;
  name: TaskEventName;
}

export interface OnTaskEventMetadata {
  events: TaskEventName[];
  queues: string[] | null;
  types: string[] | null;
  scope: 'local' | 'cluster';
}

/**
 * Calls the decorated method on task transitions (model: @OnWorkerEvent / @OnQueueEvent of
 * @nestjs/bullmq). Any provider may carry it; it is discovered at start-up. Events: `created`,
 * `requeued`, `submitting`, `submitted`, `running`, `succeeded`, `failed`, `canceled`,
 * `timed_out`, `submit_unknown`, or the groups `terminal` and `transition`. An error or a
 * rejected promise of the method is logged, never breaks the queue.
 *
 * ```ts
 * @OnTaskEvent('failed', { queue: 'reports', type: 'pdf' })
 * onPdfFailed(e: QueueTaskEvent) { ... }
 * ```
 */
export function OnTaskEvent(event: TaskEventName | readonly TaskEventName[], options: OnTaskEventOptions = {}): MethodDecorator {
  const events = (Array.isArray(event) ? [...event] : [event]) as unknown[];
  for (const e of events) if (!isTaskEventName(e)) throw new ConfigurationError(Messages.badEventName('@OnTaskEvent', e, TASK_EVENT_NAMES));
  if (events.length === 0) throw new ConfigurationError(Messages.badEventName('@OnTaskEvent', '(none)', TASK_EVENT_NAMES));
  const list = (v: string | readonly string[] | undefined) => (v === undefined ? null : typeof v === 'string' ? [v] : [...v]);
  const scope = options.scope ?? 'local';
  if (scope !== 'local' && scope !== 'cluster') throw new ConfigurationError(Messages.invalidOption('@OnTaskEvent scope', scope, "'local' or 'cluster'"));
  const meta: OnTaskEventMetadata = { events: events as TaskEventName[], queues: list(options.queue), types: list(options.type), scope };
  return SetMetadata(ON_TASK_EVENT_METADATA, meta);
}
