import { PriorityQueueModule } from 'nestjs-priority-queue';

/**
 * The demo's named queues: `ocr` (documents to the OCR vendors: interactive, archive, incident
 * recovery) and `maintenance` (tenant re-index flows). Each has its own tasks, limits and worker;
 * vendor limits are set on `ocr`, where the vendors' tasks are.
 */
export const OCR_QUEUE = 'ocr';
export const MAINTENANCE_QUEUE = 'maintenance';

/** Registered once (app.module.ts) and global, so handlers, services and controllers inject them by name. */
export const DemoQueuesModule = PriorityQueueModule.registerQueue(
  { name: OCR_QUEUE, isGlobal: true },
  { name: MAINTENANCE_QUEUE, isGlobal: true },
);
