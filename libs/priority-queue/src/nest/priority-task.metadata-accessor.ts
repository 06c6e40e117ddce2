import { Injectable, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { PRIORITY_TASK_METADATA } from './priority-queue.constants';
import type { PriorityTaskMetadata } from './priority-task.decorator';

/** Reads @PriorityTask metadata from a provider class. */
@Injectable()
export class PriorityTaskMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getTaskMetadata(target: Type<unknown> | Function): PriorityTaskMetadata | undefined {
    if (!target) return undefined;
    return this.reflector.get<PriorityTaskMetadata | undefined>(PRIORITY_TASK_METADATA, target);
  }
}
