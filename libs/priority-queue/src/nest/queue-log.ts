import { Logger } from '@nestjs/common';
import type { TaskEvent } from '../core/events';
import { TaskStatus, type Task } from '../core/task';
import type { WorkerObserver } from '../core/task-run';
import type { PriorityQueueLogLevel } from './priority-queue.options';

const RANK: Record<PriorityQueueLogLevel, number> = { debug: 0, log: 1, warn: 2, error: 3, off: 4 };

/** The library's log lines through Nest's Logger (context `PriorityQueue`), below a threshold dropped. */
export class QueueLog {
  private readonly logger = new Logger('PriorityQueue');
  private readonly min: number;

  constructor(level: PriorityQueueLogLevel = 'log') {
    if (!(level in RANK)) throw new RangeError(`logLevel must be one of ${Object.keys(RANK).join(', ')}, got ${String(level)}`);
    this.min = RANK[level];
  }

  debug(message: string): void {
    if (this.min <= RANK.debug) this.logger.debug(message);
  }

  log(message: string): void {
    if (this.min <= RANK.log) this.logger.log(message);
  }

  warn(message: string): void {
    if (this.min <= RANK.warn) this.logger.warn(message);
  }

  error(message: string, stack?: string): void {
    if (this.min <= RANK.error) this.logger.error(message, stack);
  }

  /** A listener of a queue's transitions that logs retries, failures, SUBMIT_UNKNOWN and timeouts. */
  transitions(queue: string): (event: TaskEvent) => void {
    return (e) => {
      const t = e.task;
      const what = `[${queue}] task ${t.id} (${t.type})`;
      if (e.to === TaskStatus.PENDING_SUBMIT && e.from === TaskStatus.SUBMITTING && t.attempts > 0) {
        this.warn(`${what}: attempt ${t.attempts}/${t.maxAttempts} did not complete (${t.error ?? 'no reason recorded'}); it runs again from ${new Date(t.runAt).toISOString()}`);
      } else if (e.to === TaskStatus.FAILED) {
        this.error(`${what} FAILED after ${t.attempts} attempt(s): ${t.error ?? 'no reason recorded'}`);
      } else if (e.to === TaskStatus.SUBMIT_UNKNOWN) {
        this.error(`${what} is SUBMIT_UNKNOWN: ${t.error ?? 'its submit outcome is unknown'}. It is never retried by itself: check the provider, then cancel it or submit again.`);
      } else if (e.to === TaskStatus.TIMED_OUT) {
        this.warn(`${what} TIMED_OUT (deadline ${t.deadlineAt === null ? 'none' : new Date(t.deadlineAt).toISOString()}) in ${e.from ?? 'creation'}`);
      }
    };
  }

  /** Handler errors and lost leases a queue's worker reports. */
  observer(queue: string): WorkerObserver {
    return {
      handlerFailed: (task: Task, error: unknown, phase) => {
        const msg = error instanceof Error ? error.message : String(error);
        // submit failures are logged with their outcome (retry, FAILED, SUBMIT_UNKNOWN) as transitions
        if (phase === 'submit') this.debug(`[${queue}] handler of task ${task.id} (${task.type}) threw: ${msg}`);
        else this.warn(`[${queue}] ${phase} of task ${task.id} (${task.type}) failed: ${msg}`);
      },
      leaseLost: (task: Task) =>
        this.warn(`[${queue}] lost the lease of task ${task.id} (${task.type}) while ${task.status}: another worker or the lease recovery owns it now; this worker dropped its run`),
    };
  }
}
