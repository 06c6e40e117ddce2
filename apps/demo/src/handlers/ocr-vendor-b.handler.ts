import { PriorityTask } from 'nestjs-priority-queue';
import { VendorB } from '../vendors/vendor-b';
import { OcrHandler } from './ocr-calls';
import { OCR_QUEUE } from '../queues/demo-queues';
import { OCR_TASK_OPTIONS, TaskTypes } from './task-types';

/** OCR of one document on vendor B (provider key `vendorB`). */
@PriorityTask(TaskTypes.OCR_VENDOR_B, { ...OCR_TASK_OPTIONS, providerKey: 'vendorB', queue: OCR_QUEUE })
export class OcrOnVendorBHandler extends OcrHandler {
  constructor(vendor: VendorB) {
    super(vendor);
  }
}
