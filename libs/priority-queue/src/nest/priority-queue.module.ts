import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { PriorityQueueCoreModule } from './priority-queue-core.module';
import {
  ConfigurablePriorityQueueModule,
  PRIORITY_QUEUE_ASYNC_OPTIONS_TYPE,
  PRIORITY_QUEUE_OPTIONS_TYPE,
} from './priority-queue.module-definition';
import { PriorityQueueMetrics } from './priority-queue.metrics';
import type { RegisterQueueAsyncOptions, RegisterQueueOptions } from './priority-queue.options';
import { queueProviders, rootProviders, ROOT_EXPORTS, serviceTokens } from './queue.providers';
import { getQueueOptionsToken } from './queue-tokens';

/**
 * `PriorityQueueModule.forRoot({ store, ... })` / `forRootAsync(...)`: the store backend and the
 * default queue (TaskManager, AdmissionGuard injectable as classes); once per application, global
 * by default. `registerQueue({ name, ... })` / `registerQueueAsync(...)`: more queues in the same
 * backend, injected with @InjectTaskManager(name) / @InjectAdmissionGuard(name) (model:
 * @nestjs/bullmq). The host app imports ScheduleModule.forRoot() once; this module never does.
 */
@Module({})
export class PriorityQueueModule extends ConfigurablePriorityQueueModule {
  static override forRoot(options: typeof PRIORITY_QUEUE_OPTIONS_TYPE = {}): DynamicModule {
    return withRoot(super.forRoot(options));
  }

  static override forRootAsync(options: typeof PRIORITY_QUEUE_ASYNC_OPTIONS_TYPE): DynamicModule {
    return withRoot(super.forRootAsync(options));
  }

  /** One module with one or more named queues. */
  static registerQueue(...queues: RegisterQueueOptions[]): DynamicModule {
    const providers: Provider[] = [];
    for (const { name, isGlobal: _global, ...options } of queues) {
      providers.push({ provide: getQueueOptionsToken(name), useValue: options }, ...queueProviders(name));
    }
    return {
      module: PriorityQueueModule,
      global: queues.some((q) => q.isGlobal),
      imports: [PriorityQueueCoreModule],
      providers,
      exports: queues.flatMap((q) => serviceTokens(q.name)),
    };
  }

  /** registerQueue with options from a factory (e.g. @nestjs/config). */
  static registerQueueAsync(...queues: RegisterQueueAsyncOptions[]): DynamicModule {
    const providers: Provider[] = [];
    for (const q of queues) {
      providers.push({ provide: getQueueOptionsToken(q.name), inject: q.inject ?? [], useFactory: q.useFactory }, ...queueProviders(q.name));
    }
    const imports = [...new Set(queues.flatMap((q) => q.imports ?? []))];
    return {
      module: PriorityQueueModule,
      global: queues.some((q) => q.isGlobal),
      imports: [PriorityQueueCoreModule, ...imports],
      providers,
      exports: queues.flatMap((q) => serviceTokens(q.name)),
    };
  }
}

function withRoot(definition: DynamicModule): DynamicModule {
  return {
    ...definition,
    imports: [...(definition.imports ?? []), PriorityQueueCoreModule],
    providers: [...(definition.providers ?? []), ...rootProviders(), PriorityQueueMetrics],
    exports: [...(definition.exports ?? []), ...ROOT_EXPORTS, PriorityQueueMetrics],
  };
}
