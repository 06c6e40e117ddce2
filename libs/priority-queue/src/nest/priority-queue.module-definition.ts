import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { PriorityQueueModuleOptions } from './priority-queue.options';

export const {
  ConfigurableModuleClass: ConfigurablePriorityQueueModule,
  MODULE_OPTIONS_TOKEN: PRIORITY_QUEUE_OPTIONS,
  OPTIONS_TYPE: PRIORITY_QUEUE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PRIORITY_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PriorityQueueModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
