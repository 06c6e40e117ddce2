import type { InjectionToken } from '@nestjs/common';
import { AdmissionGuard } from './admission-guard.service';
import { DEFAULT_QUEUE_NAME, PRIORITY_QUEUE_STORE } from './priority-queue.constants';
import { TaskManager } from './task-manager.service';

/**
 * Injection tokens of a queue's services (model: getQueueToken of @nestjs/bullmq). The default
 * queue's are the classes themselves (and PRIORITY_QUEUE_STORE), so `constructor(tasks:
 * TaskManager)` keeps working; a named queue's are strings.
 */
export function getTaskManagerToken(name: string = DEFAULT_QUEUE_NAME): InjectionToken {
  return name === DEFAULT_QUEUE_NAME ? TaskManager : `PriorityQueue:${name}:TaskManager`;
}

export function getAdmissionGuardToken(name: string = DEFAULT_QUEUE_NAME): InjectionToken {
  return name === DEFAULT_QUEUE_NAME ? AdmissionGuard : `PriorityQueue:${name}:AdmissionGuard`;
}

export function getTaskStoreToken(name: string = DEFAULT_QUEUE_NAME): InjectionToken {
  return name === DEFAULT_QUEUE_NAME ? PRIORITY_QUEUE_STORE : `PriorityQueue:${name}:TaskStore`;
}

/** The queue's runtime (QueueHandle); internal. */
export function getQueueHandleToken(name: string): string {
  return `PriorityQueue:${name}:Handle`;
}

/** registerQueue's options of one queue; internal. */
export function getQueueOptionsToken(name: string): string {
  return `PriorityQueue:${name}:Options`;
}
