import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { PriorityQueueHealthIndicator, PriorityQueueHealthModule } from 'nestjs-priority-queue/health';
import { expectJson, type CompatStep } from '../step.js';

/** The health indicator, run through terminus's own HealthCheckService: every queue up. */
export const health: CompatStep = {
  name: 'health indicator (@nestjs/terminus)',
  imports: [TerminusModule, PriorityQueueHealthModule],
  async run(app) {
    const indicator = app.get(PriorityQueueHealthIndicator);
    const result = await app.get(HealthCheckService).check([() => indicator.isHealthy('queues', { maxOldestWaitMs: 60_000 })]);
    expectJson(result.status, 'ok', 'health status');
    const queues = result.info?.queues as Record<string, unknown> | undefined;
    if (!queues || !('default' in queues)) throw new Error(`no default queue in the health details: ${JSON.stringify(result)}`);
    return `queues: ${Object.keys(queues).filter((k) => k !== 'status').join(', ')}`;
  },
};
