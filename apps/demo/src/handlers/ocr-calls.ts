import { NotSubmittedError, PermanentError, type HandlerContext, type PollContext, type PollResult } from 'nestjs-priority-queue';
import type { SimulatedOcrVendor } from '../vendors/simulated-ocr-vendor';
import { VendorHttpError } from '../vendors/vendor-http-error';
import type { DocumentPayload } from '../work/document-payload';

/**
 * Submits an OCR task to a vendor; the task id is the vendor idempotency key, so a retried
 * submit never starts a second job. A 429 means the vendor did not take the request:
 * NotSubmittedError, retried after the vendor's Retry-After. Other errors are retried with
 * back-off by the worker (the handler is idempotent).
 */
export async function submitOcr(vendor: SimulatedOcrVendor, { task, payload }: HandlerContext<DocumentPayload>): Promise<string> {
  try {
    const { jobId } = await vendor.submit({
      account: task.accountId ?? payload.tenantId,
      idempotencyKey: task.id,
      pages: payload.document.pages,
    });
    return jobId;
  } catch (e) {
    if (e instanceof VendorHttpError && e.status === 429) throw new NotSubmittedError(e.message, e.retryAfterMs);
    throw e;
  }
}

/** The OCR handler of one vendor: the subclass adds `@PriorityTask` and injects its vendor. */
export abstract class OcrHandler {
  constructor(private readonly vendor: SimulatedOcrVendor) {}

  submit(ctx: HandlerContext<DocumentPayload>): Promise<string> {
    return submitOcr(this.vendor, ctx);
  }

  poll(ctx: PollContext<DocumentPayload>): Promise<PollResult> {
    return pollOcr(this.vendor, ctx);
  }

  cancel({ externalId }: PollContext<DocumentPayload>) {
    return this.vendor.cancel(externalId);
  }
}

/** Polls a vendor job; "running" comes back with the vendor's "check again in" hint. */
export async function pollOcr(vendor: SimulatedOcrVendor, { externalId }: PollContext<DocumentPayload>): Promise<PollResult> {
  try {
    const status = await vendor.poll(externalId);
    if (status.state === 'running') return { done: false, nextPollMs: status.checkAgainInMs };
    if (status.state === 'canceled') return { done: true, failed: `${vendor.name} job ${externalId} was canceled` };
    return { done: true, result: { vendor: vendor.name, jobId: externalId, pages: status.pages, text: status.text } };
  } catch (e) {
    if (e instanceof VendorHttpError && e.status === 404) throw new PermanentError(e.message);
    throw e;
  }
}
