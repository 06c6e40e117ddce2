import { Module, type LoggerService } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { ManualClock } from '../../libs/priority-queue/src/core';
import {
  memoryStore,
  NotSubmittedError,
  PriorityQueueModule,
  PriorityQueueRegistry,
  PriorityTask,
  TaskManager,
  TaskStatus,
  type HandlerContext,
  type PollResult,
  type PriorityQueueLogLevel,
} from 'nestjs-priority-queue';
import { eventually } from './support/queues-app';

interface Line {
  level: string;
  context: string;
  message: string;
}

/** Collects what Nest's Logger receives. */
class Captor implements LoggerService {
  readonly lines: Line[] = [];
  private add(level: string, message: unknown, rest: unknown[]) {
    this.lines.push({ level, message: String(message), context: String(rest[rest.length - 1] ?? '') });
  }
  log(m: unknown, ...r: unknown[]) {
    this.add('log', m, r);
  }
  warn(m: unknown, ...r: unknown[]) {
    this.add('warn', m, r);
  }
  error(m: unknown, ...r: unknown[]) {
    this.add('error', m, r);
  }
  debug(m: unknown, ...r: unknown[]) {
    this.add('debug', m, r);
  }
  ours(): Line[] {
    return this.lines.filter((l) => l.context === 'PriorityQueue');
  }
}

@PriorityTask('flaky', { maxAttempts: 2, backoff: { baseMs: 1, maxMs: 1 } })
class FlakyHandler {
  private readonly failed = new Set<string>();
  run({ task, payload }: HandlerContext<{ fail: 'once' | 'always' }>) {
    if (payload.fail === 'always' || !this.failed.has(task.id)) {
      this.failed.add(task.id);
      throw new NotSubmittedError('vendor said 503');
    }
    return 'ok';
  }
}

@PriorityTask('charge', { idempotent: false })
class ChargeHandler {
  run(): never {
    throw new Error('connection reset after the request was sent');
  }
}

@PriorityTask('render', { pollIntervalMs: 5 })
class RenderHandler {
  private polls = 0;
  submit() {
    return 'job-1';
  }
  poll(): PollResult {
    if (++this.polls === 1) throw new Error('status endpoint timed out');
    return { done: true, result: 'rendered' };
  }
}

/** Holds its run until released, so that its lease can be taken away meanwhile (not idempotent: the recovery ends it SUBMIT_UNKNOWN, nobody claims it again). */
@PriorityTask('slow', { idempotent: false })
class SlowHandler {
  release: (() => void) | null = null;
  private markStarted: (() => void) | null = null;
  readonly started = new Promise<void>((r) => (this.markStarted = r));
  run() {
    this.markStarted?.();
    return new Promise((r) => (this.release = () => r('late')));
  }
}

@Module({ providers: [FlakyHandler, ChargeHandler, RenderHandler, SlowHandler] })
class HandlersModule {}

async function app(logLevel: PriorityQueueLogLevel | undefined, captor: Captor, clock?: ManualClock, leaseMs = 60_000): Promise<TestingModule> {
  const ref = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      PriorityQueueModule.forRoot({ store: memoryStore({ clock }), logLevel, workers: { idlePollMs: 10, recoverEveryMs: 3_600_000, leaseMs, shutdownGraceMs: 1000 } }),
      HandlersModule,
    ],
  })
    .setLogger(captor)
    .compile();
  await ref.init();
  return ref;
}

describe('logging through Nest Logger (e2e)', () => {
  it('logs retries, FAILED, SUBMIT_UNKNOWN and poll failures, with the queue and task', async () => {
    const captor = new Captor();
    const ref = await app(undefined, captor);
    try {
      const tm = ref.get(TaskManager);
      const once = await tm.submit({ type: 'flaky', payload: { fail: 'once' } });
      const always = await tm.submit({ type: 'flaky', payload: { fail: 'always' } });
      const charge = await tm.submit({ type: 'charge' });
      const render = await tm.submit({ type: 'render' });
      for (const t of [once, always, charge, render]) await tm.waitFor(t.id, { timeoutMs: 15_000, pollMs: 20 });
      expect((await tm.get(charge.id))!.status).toBe(TaskStatus.SUBMIT_UNKNOWN);

      const ours = captor.ours();
      const find = (re: RegExp) => ours.filter((l) => re.test(l.message)).map((l) => l.level);
      expect(find(new RegExp(`\\[default\\] task ${once.id} \\(flaky\\): attempt 1/2 did not complete \\(vendor said 503\\); it runs again from`))).toEqual(['warn']);
      expect(find(new RegExp(`\\[default\\] task ${always.id} \\(flaky\\) FAILED after \\d attempt\\(s\\): vendor said 503`))).toEqual(['error']);
      expect(find(new RegExp(`\\[default\\] task ${charge.id} \\(charge\\) is SUBMIT_UNKNOWN: connection reset after the request was sent\\. It is never retried by itself`))).toEqual(['error']);
      expect(find(new RegExp(`\\[default\\] poll of task ${render.id} \\(render\\) failed: status endpoint timed out`))).toEqual(['warn']);
      expect(find(/\[default\] worker .* started: /)).toEqual(['log']);
      expect(find(/threw:/)).toEqual([]); // debug lines are below the default threshold
    } finally {
      await ref.close();
    }
    expect(captor.ours().filter((l) => /\[default\] worker stopped/.test(l.message))).toHaveLength(1);
  });

  it('logs a lost lease: the recovery took the task back while its handler still ran', async () => {
    const captor = new Captor();
    const clock = new ManualClock(Date.now());
    const ref = await app(undefined, captor, clock, 600); // renewals every 100 ms of local time
    const slow = ref.get(SlowHandler);
    try {
      const s = await ref.get(TaskManager).submit({ type: 'slow' });
      await slow.started;
      clock.advance(1_000); // past leaseMs: the lease expired in store time
      const store = ref.get(PriorityQueueRegistry).store();
      expect((await store.recoverExpired(10)).map((t) => t.to)).toEqual([TaskStatus.SUBMIT_UNKNOWN]);
      // the worker's next renewal (due leaseMs / 3 after the last, in local time) is refused
      await eventually(() => captor.ours().some((l) => l.message.includes(`lost the lease of task ${s.id}`)), 'the lost-lease line', 30_000);
      expect(captor.ours().filter((l) => l.message.includes(`lost the lease of task ${s.id} (slow)`)).map((l) => l.level)).toEqual(['warn']);
    } finally {
      slow.release?.();
      await ref.close();
    }
  });

  it('keeps below its threshold: error only, or nothing at all', async () => {
    for (const level of ['error', 'off'] as const) {
      const captor = new Captor();
      const ref = await app(level, captor);
      try {
        const tm = ref.get(TaskManager);
        const t = await tm.submit({ type: 'flaky', payload: { fail: 'always' } });
        await tm.waitFor(t.id, { timeoutMs: 15_000, pollMs: 20 });
      } finally {
        await ref.close();
      }
      const levels = captor.ours().map((l) => l.level);
      expect(levels).toEqual(level === 'error' ? ['error'] : []);
    }
  });
});
