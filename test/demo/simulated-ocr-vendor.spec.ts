import { SimulatedOcrVendor } from '../../apps/demo/src/vendors/simulated-ocr-vendor';
import { VendorHttpError } from '../../apps/demo/src/vendors/vendor-http-error';

/** The simulated vendor enforces its contract like a gateway would: the checks of the load script rely on it. */
describe('SimulatedOcrVendor', () => {
  let now = 1_000_000;
  const vendor = (submitsPerSecond = 10) =>
    new SimulatedOcrVendor(
      'vendorA',
      {
        submitsPerSecond,
        maxConcurrentJobsPerAccount: 2,
        submitLatencyMs: { min: 0, max: 0 },
        jobDurationMs: { min: 100, max: 100 },
        pollLatencyMs: { min: 0, max: 0 },
        transientErrorShare: 0,
        tooManyRequestsShare: 0,
        jitterToleranceMs: 0,
        pollHintMs: 50,
      },
      () => 0.5,
      () => now,
    );

  it('answers 429 and counts a violation above the account limit, and dedups by idempotency key', async () => {
    const v = vendor();
    const a = await v.submit({ account: 'acct', idempotencyKey: 'k1', pages: 1 });
    expect(await v.submit({ account: 'acct', idempotencyKey: 'k1', pages: 1 })).toEqual(a);
    await v.submit({ account: 'acct', idempotencyKey: 'k2', pages: 1 });
    await expect(v.submit({ account: 'acct', idempotencyKey: 'k3', pages: 1 })).rejects.toBeInstanceOf(VendorHttpError);
    expect(v.stats().violations).toEqual({ rate: 0, accountConcurrency: 1 });
    expect(v.stats().peakConcurrentJobsByAccount).toEqual({ acct: 2 });
  });

  it('answers 429 and counts a violation above its submits per second, counted over a sliding second', async () => {
    const v = vendor(3);
    now += 10_000;
    for (let i = 0; i < 3; i++) await v.submit({ account: `a${i}`, idempotencyKey: `r${i}`, pages: 1 });
    await expect(v.submit({ account: 'a9', idempotencyKey: 'r9', pages: 1 })).rejects.toMatchObject({ status: 429 });
    now += 1000;
    await v.submit({ account: 'a8', idempotencyKey: 'r8', pages: 1 });
    expect(v.stats()).toMatchObject({ violations: { rate: 1, accountConcurrency: 0 }, peakSubmitsPerSecond: 4 });
  });

  it('reports running until the job is done, then done', async () => {
    const v = vendor();
    now += 10_000;
    const { jobId } = await v.submit({ account: 'b', idempotencyKey: 'p', pages: 2 });
    expect(await v.poll(jobId)).toMatchObject({ state: 'running', checkAgainInMs: 50 });
    now += 100;
    expect(await v.poll(jobId)).toMatchObject({ state: 'done', pages: 2 });
    await expect(v.poll(jobId)).rejects.toMatchObject({ status: 404 });
  });
});
