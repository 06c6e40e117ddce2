import { Injectable } from '@nestjs/common';
import { isTerminal, OnTaskEvent, TaskStatus, type QueueTaskEvent } from 'nestjs-priority-queue';

/** When one task was created, first started (claimed for submit) and finished. */
export interface TimelineEntry {
  taskId: string;
  type: string;
  providerKey: string;
  tenantId: string | null;
  priority: number;
  kind: string | null;
  plan: string | null;
  /** Store-clock times (ms). */
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** Order in which this process saw the creation and the first start (exact, no clock ties). */
  createdSeq: number;
  startedSeq: number | null;
  status: TaskStatus;
}

const MAX_ENTRIES = 200_000;

/**
 * Records, from the queues' events, when each task of this process was created and first
 * started. It backs the load script's wait times and start-order checks. Only transitions made
 * by this process are seen (@OnTaskEvent's local scope): run the demo as one process when you
 * measure.
 */
@Injectable()
export class TaskTimeline {
  private readonly entries = new Map<string, TimelineEntry>();
  private seq = 0;

  list(): TimelineEntry[] {
    return [...this.entries.values()];
  }

  clear(): void {
    this.entries.clear();
  }

  @OnTaskEvent('transition')
  record(e: QueueTaskEvent): void {
    let entry = this.entries.get(e.taskId);
    if (e.from === null) {
      const payload = (e.task.payload ?? {}) as { kind?: string; plan?: string };
      entry = {
        taskId: e.taskId,
        type: e.type,
        providerKey: e.task.providerKey,
        tenantId: e.task.tenantId,
        priority: e.task.priority,
        kind: payload.kind ?? null,
        plan: payload.plan ?? null,
        createdAt: e.task.createdAt,
        startedAt: null,
        finishedAt: null,
        createdSeq: ++this.seq,
        startedSeq: null,
        status: e.to,
      };
      this.entries.set(e.taskId, entry);
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
      return;
    }
    if (!entry) return;
    entry.status = e.to;
    if (e.to === TaskStatus.SUBMITTING && entry.startedSeq === null) {
      entry.startedAt = e.at;
      entry.startedSeq = ++this.seq;
    }
    if (isTerminal(e.to)) entry.finishedAt = e.at;
  }
}
