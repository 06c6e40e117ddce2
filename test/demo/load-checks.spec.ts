import { checkStartsBeforeQueuedArchive, checkVendorLimits } from '../../apps/demo/load/load-checks';
import type { TimelineEntry, VendorStats } from '../../apps/demo/load/load-types';

const entry = (taskId: string, kind: string, providerKey: string, createdAt: number, startedAt: number | null): TimelineEntry => ({
  taskId,
  type: `ocr.${providerKey}`,
  providerKey,
  tenantId: 't',
  priority: 0,
  kind,
  plan: 'ENTERPRISE',
  createdAt,
  startedAt,
  finishedAt: startedAt === null ? null : startedAt + 10,
  startedSeq: startedAt,
  status: 'SUCCEEDED',
});

describe('load script checks', () => {
  const archive = [entry('x1', 'BATCH_ARCHIVE', 'vendorA', 0, 5), entry('x2', 'BATCH_ARCHIVE', 'vendorA', 0, 300), entry('y1', 'BATCH_ARCHIVE', 'vendorB', 0, 150)];

  it('passes when the urgent job starts before every archive job still queued at its creation', () => {
    const j = entry('j', 'INTERACTIVE', 'vendorA', 100, 200);
    // x1 had started before j existed; y1 is another vendor's archive (no competition)
    expect(checkStartsBeforeQueuedArchive('c', [j], archive).ok).toBe(true);
  });

  it('fails when a queued archive job of the same vendor starts first', () => {
    const j = entry('j', 'INTERACTIVE', 'vendorA', 100, 400);
    const r = checkStartsBeforeQueuedArchive('c', [j], archive);
    expect(r.ok).toBe(false);
    expect(r.detail).toMatch(/overtaken by 1 queued archive job/);
  });

  it('fails when the urgent job never started or there is none', () => {
    expect(checkStartsBeforeQueuedArchive('c', [entry('j', 'INTERACTIVE', 'vendorA', 100, null)], archive).ok).toBe(false);
    expect(checkStartsBeforeQueuedArchive('c', [], archive).ok).toBe(false);
  });

  const vendor = (over: Partial<VendorStats>): VendorStats => ({
    name: 'vendorA',
    contract: { submitsPerSecond: 5, maxConcurrentJobsPerAccount: 2, jitterToleranceMs: 25 },
    submitRequests: 10,
    accepted: 10,
    injected429: 0,
    injected503: 0,
    violations: { rate: 0, accountConcurrency: 0 },
    peakSubmitsPerSecond: 5,
    peakConcurrentJobsByAccount: { a: 2 },
    ...over,
  });

  it('flags a vendor whose rate, account limit or contract was exceeded', () => {
    expect(checkVendorLimits([vendor({})])[0].ok).toBe(true);
    expect(checkVendorLimits([vendor({ peakSubmitsPerSecond: 6 })])[0].ok).toBe(false);
    expect(checkVendorLimits([vendor({ peakConcurrentJobsByAccount: { a: 3 } })])[0].ok).toBe(false);
    expect(checkVendorLimits([vendor({ violations: { rate: 1, accountConcurrency: 0 } })])[0].ok).toBe(false);
  });
});
