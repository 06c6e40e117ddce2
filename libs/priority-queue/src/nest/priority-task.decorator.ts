import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import type { TaskTypeOptions } from '../core/handler';
import { PRIORITY_TASK_METADATA } from './priority-queue.constants';

export interface PriorityTaskMetadata {
  type: string;
  options: TaskTypeOptions;
}

/**
 * Marks a provider class as the handler of a task type. The class implements `run()` (one-shot)
 * or `submit()` + `poll()` (+ optional `cancel()`) of TaskHandler. It must be listed in a
 * module's providers; the explorer finds it at start-up.
 */
export function PriorityTask(type: string, options: TaskTypeOptions = {}): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(PRIORITY_TASK_METADATA, { type, options } satisfies PriorityTaskMetadata));
}
