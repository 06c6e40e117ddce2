import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { PriorityQueueOrchestrator } from './priority-queue.orchestrator';
import { PriorityQueueRegistry } from './priority-queue.registry';
import { PriorityTaskExplorer } from './priority-task.explorer';
import { PriorityTaskMetadataAccessor } from './priority-task.metadata-accessor';
import { TaskEventExplorer } from './task-event.explorer';

/**
 * What every queue of an application shares, once per application (forRoot and each
 * registerQueue import it; model: the core module of @nestjs/bullmq): the queue registry, the
 * explorers of @PriorityTask and @OnTaskEvent, the orchestrator of workers and shutdown.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [PriorityQueueRegistry, PriorityTaskMetadataAccessor, PriorityTaskExplorer, TaskEventExplorer, PriorityQueueOrchestrator],
  exports: [PriorityQueueRegistry, PriorityQueueOrchestrator],
})
export class PriorityQueueCoreModule {}
