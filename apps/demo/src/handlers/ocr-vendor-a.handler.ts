import { PriorityTask, type HandlerContext, type PollContext } from 'nestjs-priority-queue';
import { VendorA } from '../vendors/vendor-a';
import type { DocumentPayload } from '../work/document-payload';
import { pollOcr, submitOcr } from './ocr-calls';
import { OCR_TASK_OPTIONS, TaskTypes } from './task-types';

/** OCR of one document on vendor A (provider key `vendorA`). */
@PriorityTask(TaskTypes.OCR_VENDOR_A, { ...OCR_TASK_OPTIONS, providerKey: 'vendorA' })
export class OcrOnVendorAHandler {
  constructor(private readonly vendor: VendorA) {}

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
