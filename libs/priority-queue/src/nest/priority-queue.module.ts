import { Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TaskEvents } from '../core/events';
import { PriorityQueue } from '../core/queue';
import { TaskTypeRegistry } from '../core/registry';
import type { TaskStore } from '../core/task-store.port';
import { AdmissionGuard } from './admission-guard.service';
import { PRIORITY_QUEUE_CORE, PRIORITY_QUEUE_EVENTS, PRIORITY_QUEUE_REGISTRY, PRIORITY_QUEUE_STORE } from './priority-queue.constants';
import { ConfigurablePriorityQueueModule, PRIORITY_QUEUE_OPTIONS } from './priority-queue.module-definition';
import type { PriorityQueueModuleOptions } from './priority-queue.options';
import { PriorityQueueMetrics } from './priority-queue.metrics';
import { PriorityQueueOrchestrator } from './priority-queue.orchestrator';
import { PriorityTaskExplorer } from './priority-task.explorer';
import { PriorityTaskMetadataAccessor } from './priority-task.metadata-accessor';
import { StoreProvider } from './store.provider';
import { TaskManager } from './task-manager.service';

const coreProviders: Provider[] = [
  { provide: PRIORITY_QUEUE_REGISTRY, useFactory: () => new TaskTypeRegistry() },
  { provide: PRIORITY_QUEUE_EVENTS, useFactory: () => new TaskEvents() },
  {
    provide: PRIORITY_QUEUE_CORE,
    inject: [PRIORITY_QUEUE_STORE, PRIORITY_QUEUE_REGISTRY, PRIORITY_QUEUE_EVENTS, PRIORITY_QUEUE_OPTIONS],
    useFactory: (store: TaskStore, registry: TaskTypeRegistry, events: TaskEvents, options: PriorityQueueModuleOptions) =>
      new PriorityQueue({ store, registry, events, maxPayloadBytes: options.maxPayloadBytes }),
  },
];

/**
 * PriorityQueueModule.forRoot({...}) / forRootAsync({...}). The host app imports
 * ScheduleModule.forRoot() once; this module never does.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    StoreProvider,
    ...coreProviders,
    TaskManager,
    AdmissionGuard,
    PriorityTaskMetadataAccessor,
    PriorityTaskExplorer,
    PriorityQueueOrchestrator,
    PriorityQueueMetrics,
  ],
  exports: [TaskManager, AdmissionGuard, PRIORITY_QUEUE_STORE, PRIORITY_QUEUE_EVENTS, PriorityQueueOrchestrator, PriorityQueueMetrics],
})
export class PriorityQueueModule extends ConfigurablePriorityQueueModule {}
