import { PriorityTask, type HandlerContext, type PollContext } from 'nestjs-priority-queue';
import { VendorB } from '../vendors/vendor-b';
import type { DocumentPayload } from '../work/document-payload';
import { pollOcr, submitOcr } from './ocr-calls';
import { OCR_TASK_OPTIONS, TaskTypes } from './task-types';

/** OCR of one document on vendor B (provider key `vendorB`). */
@PriorityTask(TaskTypes.OCR_VENDOR_B, { ...OCR_TASK_OPTIONS, providerKey: 'vendorB' })
export class OcrOnVendorBHandler {
  constructor(private readonly vendor: VendorB) {}

  submit(ctx: HandlerContext<DocumentPayload>) {
    return submitOcr(this.vendor, ctx);
  }

  poll(ctx: PollContext<DocumentPayload>) {
    return pollOcr(this.vendor, ctx);
  }

  cancel({ externalId }: PollContext<DocumentPayload>) {
    return this.vendor.cancel(externalId);
  }
}
