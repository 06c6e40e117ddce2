import type { DynamicModule } from '@nestjs/common';
import { PriorityQueueModule } from 'nestjs-priority-queue';

/**
 * The demo's named queues: `ocr` (documents to the OCR vendors: interactive, archive, incident
 * recovery) and `maintenance` (tenant re-index flows). Each has its own tasks, limits and worker;
 * vendor limits are set on `ocr`, where the vendors' tasks are.
 */
export const OCR_QUEUE = 'ocr';
export const MAINTENANCE_QUEUE = 'maintenance';

/**
 * Registered once (app.module.ts) and global, so handlers, services and controllers inject them
 * by name. `fairShare`: the `ocr` queue serves the tenants of one priority level in proportion
 * to their weights (`fairness: 'tenant'`, fairness/fair-share.ts) instead of in submit order.
 */
export function demoQueuesModule(fairShare: boolean): DynamicModule {
  return PriorityQueueModule.registerQueue(
    { name: OCR_QUEUE, isGlobal: true, ...(fairShare ? { fairness: 'tenant' as const } : {}) },
    { name: MAINTENANCE_QUEUE, isGlobal: true },
  );
}
