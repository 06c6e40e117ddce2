import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { TaskHandler } from '../core/handler';
import { TaskTypeRegistry } from '../core/registry';
import { PRIORITY_QUEUE_REGISTRY } from './priority-queue.constants';
import { PRIORITY_QUEUE_OPTIONS } from './priority-queue.module-definition';
import type { PriorityQueueModuleOptions } from './priority-queue.options';
import { PriorityTaskMetadataAccessor } from './priority-task.metadata-accessor';

/**
 * Finds every provider decorated with @PriorityTask and registers it as the handler of its type
 * (model: nestjs/bull's explorer). Types declared in the options are registered too, for
 * producer-only processes. A duplicate handler or a handler without run/submit+poll fails the
 * start-up with a clear message.
 */
@Injectable()
export class PriorityTaskExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadata: PriorityTaskMetadataAccessor,
    @Inject(PRIORITY_QUEUE_REGISTRY) private readonly registry: TaskTypeRegistry,
    @Inject(PRIORITY_QUEUE_OPTIONS) private readonly options: PriorityQueueModuleOptions,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { instance, metatype } = wrapper;
      if (!instance || !metatype || !wrapper.isDependencyTreeStatic()) continue;
      const meta = this.metadata.getTaskMetadata(instance.constructor ?? metatype);
      if (!meta) continue;
      this.registry.register(meta.type, meta.options, instance as TaskHandler, (metatype as Function).name);
    }
    for (const { type, ...options } of this.options.taskTypes ?? []) {
      this.registry.register(type, options, null, 'options');
    }
  }
}
