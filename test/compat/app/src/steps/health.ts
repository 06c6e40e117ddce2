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
    const queues = (result.info?.queues as { queues?: Record<string, { store: string; workers: string }> } | undefined)?.queues;
    if (!queues) throw new Error(`no per-queue details in the health result: ${JSON.stringify(result)}`);
    for (const [name, q] of Object.entries(queues)) expectJson([q.store, q.workers], ['up', 'running'], `health of queue ${name}`);
    return `queues: ${Object.keys(queues).join(', ')}`;
  },
};
