import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { ValidationError } from '../core/errors';
import { Messages } from '../core/messages';
import { MAX_TIMER_MS } from '../core/timers';
import { intOption } from '../core/validation';
import { PriorityQueueRegistry } from '../nest/priority-queue.registry';
import type { QueueHandle } from '../nest/queue-handle';

export interface PriorityQueueHealthOptions {
  /** Queues to check (default: every queue of the application). */
  queues?: readonly string[];
  /**
   * Down when a queue's oldest due PENDING_SUBMIT task has waited longer than this (ms): one
   * number for every queue checked, or per queue name (queues not named are not wait-checked).
   * The wait is read with the store's stats(). Default: no wait check.
   */
  maxOldestWaitMs?: number | Readonly<Record<string, number>>;
  /** Down when the store does not answer within this many ms (default 2000). */
  timeoutMs?: number;
}

/** What the indicator reports per queue. */
export interface QueueHealth {
  /** The store answered (its clock, and stats() when the wait is checked) within timeoutMs. */
  store: 'up' | 'down';
  /** `running`: this process's worker runs; `stopped`: it should (a handler is here) but does not; `none`: no worker expected here. */
  workers: 'running' | 'stopped' | 'none';
  oldestWaitMs?: number;
  maxOldestWaitMs?: number;
  error?: string;
}

const DEFAULT_TIMEOUT_MS = 2000;

/**
 * A @nestjs/terminus health indicator of the queues (built on terminus's HealthIndicatorService):
 * per queue, the store is reachable, the worker runs where it should, and the oldest due task
 * waits less than a threshold. Up only when every queue checked is.
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.queues.isHealthy('queues', { maxOldestWaitMs: 60_000 })]); }
 * ```
 */
@Injectable()
export class PriorityQueueHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly registry: PriorityQueueRegistry,
  ) {}

  async isHealthy<const Key extends string = 'priority-queue'>(
    key: Key = 'priority-queue' as Key,
    options: PriorityQueueHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.indicators.check(key);
    const timeoutMs = intOption('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS, 1, MAX_TIMER_MS);
    const names = options.queues ? [...options.queues] : this.registry.names();
    const handles = names.map((n) => this.registry.handle(n)); // QueueNotFoundError for a name not registered
    const results = await Promise.all(handles.map((h) => this.check(h, threshold(options.maxOldestWaitMs, h.name), timeoutMs)));
    const queues: Record<string, QueueHealth> = {};
    let up = true;
    handles.forEach((h, i) => {
      const r = results[i];
      queues[h.name] = r;
      up &&= r.store === 'up' && r.workers !== 'stopped' && r.error === undefined;
    });
    return (up ? session.up({ queues }) : session.down({ queues })) as HealthIndicatorResult<Key>;
  }

  private async check(h: QueueHandle, maxWait: number | undefined, timeoutMs: number): Promise<QueueHealth> {
    const expected = h.options.workers?.enabled !== false && h.handlers > 0;
    const workers: QueueHealth['workers'] = !expected ? 'none' : h.worker?.isStarted ? 'running' : 'stopped';
    const out: QueueHealth = { store: 'up', workers };
    try {
      if (maxWait === undefined) {
        await within(h.store.now(), timeoutMs);
        return out;
      }
      const stats = await within(h.store.stats(), timeoutMs);
      const oldest = stats.pending.reduce((m, p) => Math.max(m, p.oldestWaitMs), 0);
      out.oldestWaitMs = oldest;
      out.maxOldestWaitMs = maxWait;
      if (oldest > maxWait) out.error = `the oldest due task has waited ${oldest} ms (limit ${maxWait} ms)`;
    } catch (e) {
      out.store = 'down';
      out.error = e instanceof Error ? e.message : String(e);
    }
    return out;
  }
}

function threshold(max: PriorityQueueHealthOptions['maxOldestWaitMs'], queue: string): number | undefined {
  const v = typeof max === 'number' || max === undefined ? max : Object.prototype.hasOwnProperty.call(max, queue) ? max[queue] : undefined;
  if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new ValidationError(Messages.invalidOption('maxOldestWaitMs', v, 'a number of ms >= 0'));
  return v;
}

async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
