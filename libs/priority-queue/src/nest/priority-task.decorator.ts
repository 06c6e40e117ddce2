import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import type { TaskTypeOptions } from '../core/handler';
import { PRIORITY_TASK_METADATA } from './priority-queue.constants';

/** @PriorityTask options: the task type's options, and the queue it belongs to. */
export interface PriorityTaskOptions extends TaskTypeOptions {
  /** The queue of this type (a registerQueue name); default: forRoot's queue. A type belongs to one queue. */
  queue?: string;
}

export interface PriorityTaskMetadata {
  type: string;
  options: PriorityTaskOptions;
}

/**
 * Marks a provider class as the handler of a task type. The class implements `run()` (one-shot)
 * or `submit()` + `poll()` (+ optional `cancel()`) of TaskHandler. It must be listed in a
 * module's providers; the explorer finds it at start-up.
 */
export function PriorityTask(type: string, options: PriorityTaskOptions = {}): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(PRIORITY_TASK_METADATA, { type, options } satisfies PriorityTaskMetadata));
}
