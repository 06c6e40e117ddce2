import { PriorityTask } from 'nestjs-priority-queue';
import { VendorA } from '../vendors/vendor-a';
import { OcrHandler } from './ocr-calls';
import { OCR_QUEUE } from '../queues/demo-queues';
import { OCR_TASK_OPTIONS, TaskTypes } from './task-types';

/** OCR of one document on vendor A (provider key `vendorA`). */
@PriorityTask(TaskTypes.OCR_VENDOR_A, { ...OCR_TASK_OPTIONS, providerKey: 'vendorA', queue: OCR_QUEUE })
export class OcrOnVendorAHandler extends OcrHandler {
  constructor(vendor: VendorA) {
    super(vendor);
  }
}
