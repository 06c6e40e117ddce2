import type { Task } from 'nestjs-priority-queue';
import { priorityLevelName } from '../priority/priority-level';

/** A task as the HTTP API shows it. */
export function taskView(task: Task) {
  const payload = (task.payload ?? {}) as { kind?: string; plan?: string };
  return {
    id: task.id,
    type: task.type,
    status: task.status,
    kind: payload.kind ?? null,
    plan: payload.plan ?? null,
    tenantId: task.tenantId,
    vendor: task.providerKey,
    priority: task.priority,
    priorityLevel: priorityLevelName(task.priority),
    attempts: task.attempts,
    externalId: task.externalId,
    cancelRequested: task.cancelRequested,
    createdAt: task.createdAt,
    finishedAt: task.finishedAt,
    result: task.result,
    error: task.error,
  };
}
