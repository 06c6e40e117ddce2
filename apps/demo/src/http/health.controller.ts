import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { PriorityQueueHealthIndicator } from 'nestjs-priority-queue/health';

/** Longest a due task may wait before /health says down (archive batches queue for minutes at night). */
const MAX_OLDEST_WAIT_MS = 15 * 60_000;

/** GET /health (no key): each queue's store answers, its worker runs, its oldest due task waits less than 15 min. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queues: PriorityQueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.queues.isHealthy('queues', { maxOldestWaitMs: MAX_OLDEST_WAIT_MS })]);
  }
}
