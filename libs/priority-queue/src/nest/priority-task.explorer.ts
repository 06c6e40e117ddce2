import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ConfigurationError } from '../core/errors';
import type { TaskHandler } from '../core/handler';
import { Messages } from '../core/messages';
import { DEFAULT_QUEUE_NAME } from './priority-queue.constants';
import { PriorityQueueRegistry } from './priority-queue.registry';
import { PriorityTaskMetadataAccessor } from './priority-task.metadata-accessor';

/**
 * Finds every provider decorated with @PriorityTask and registers it as the handler of its type
 * in its queue (model: nestjs/bull's explorer). A handler of an unregistered queue, a duplicate
 * handler, a handler without run/submit+poll, or a type in two queues fails the start-up with a
 * clear message.
 */
@Injectable()
export class PriorityTaskExplorer implements OnModuleInit {
  private explored = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadata: PriorityTaskMetadataAccessor,
    private readonly queues: PriorityQueueRegistry,
  ) {}

  onModuleInit(): void {
    if (this.explored) return; // a second init() of the same container (createNestApplication after init)
    this.explored = true;
    for (const wrapper of this.discovery.getProviders()) {
      const { instance, metatype } = wrapper;
      if (!instance || !metatype || !wrapper.isDependencyTreeStatic()) continue;
      const meta = this.metadata.getTaskMetadata(instance.constructor ?? metatype);
      if (!meta) continue;
      const name = (metatype as Function).name;
      const { queue = DEFAULT_QUEUE_NAME, ...options } = meta.options;
      if (!this.queues.has(queue)) throw new ConfigurationError(Messages.queueNotRegistered(queue, `@PriorityTask('${meta.type}') on ${name}`));
      const h = this.queues.handle(queue);
      const before = h.registry.get(meta.type)?.handler;
      h.registry.register(meta.type, options, instance as TaskHandler, name);
      if (!before) h.handlers++;
    }
    this.checkOneQueuePerType();
  }

  private checkOneQueuePerType(): void {
    const owner = new Map<string, string>();
    for (const h of this.queues.handles()) {
      for (const type of h.registry.types()) {
        const other = owner.get(type);
        if (other !== undefined) throw new ConfigurationError(Messages.typeInTwoQueues(type, other, h.name));
        owner.set(type, h.name);
      }
    }
  }
}
