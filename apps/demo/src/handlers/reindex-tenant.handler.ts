import { Inject } from '@nestjs/common';
import { PermanentError, PriorityTask, type HandlerContext, type PollContext, type PollResult } from 'nestjs-priority-queue';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { SimulatedSearchIndexer } from '../search/simulated-search-indexer';
import type { ReindexPayload } from '../work/document-payload';
import { MAINTENANCE_QUEUE } from '../queues/demo-queues';
import { TaskTypes } from './task-types';

/**
 * The "re-index tenant" flow: starts a rebuild on the search cluster and polls it. Tasks carry
 * concurrencyKey `reindex:<tenantId>` (limit 1 by default), so two rebuilds of one tenant never
 * run at once while those of different tenants do.
 */
@PriorityTask(TaskTypes.REINDEX_TENANT, { providerKey: 'search', pollIntervalMs: 50, maxAttempts: 3, queue: MAINTENANCE_QUEUE })
export class ReindexTenantHandler {
  constructor(
    private readonly indexer: SimulatedSearchIndexer,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  submit({ payload }: HandlerContext<ReindexPayload>): string {
    return this.indexer.startReindex(payload.tenantId);
  }

  poll({ externalId, payload }: PollContext<ReindexPayload>): PollResult {
    const left = this.indexer.remainingMs(externalId);
    if (left === null) throw new PermanentError(`search cluster knows no job ${externalId}`);
    if (left > 0) return { done: false, nextPollMs: Math.min(left, this.config.search.pollHintMs) };
    return { done: true, result: { tenantId: payload.tenantId, reindexed: true } };
  }

  cancel({ externalId }: PollContext<ReindexPayload>): void {
    this.indexer.stop(externalId);
  }
}
