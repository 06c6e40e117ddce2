import { compact, inNamespace, submitAll, type Scenario } from '../scenario';
import { seededRandom, randomInt } from '../lib/rng';
import { Countdown, nowMs, perSecond, sleep } from '../lib/stats';
import type { AdmissionLimits, BenchJob } from '../target';

const PROVIDERS = 2;
const QPS = 500;
/** Submits a provider may start at once on top of its rate (0.1 s worth). */
const BURST = 50;
const ACCOUNTS = 200;
const ACCOUNT_CONCURRENCY = 2;
const TENANTS = 50;
const TENANT_QUOTA = 10;
/** Handlers hold their slot this long, so that the concurrency limits actually bind. */
const HOLD_MS = 5;
const WORKER_CONCURRENCY = 64;
/** Store times are whole milliseconds: a rate window may look up to 1 ms shorter than it was. */
const CLOCK_TOLERANCE_MS = 1;

interface AuditEntry {
  job: BenchJob;
  claimedAt: number;
  start: number;
  end: number;
}

/**
 * Admission (ours only: the peers have nothing equivalent). 200 accounts of concurrency 2 spread
 * over 2 providers limited to 500 submits/s each, 50 tenants with a quota of 10; accounts and
 * tenants drawn with a skew so that the hot ones hit their limits. An audit log of claim times
 * (store clock) and handler intervals is checked afterwards: no account above 2, no tenant above
 * 10 at any instant, no provider above burst + qps * t in any window.
 */
export const admission: Scenario = {
  id: 'admission',
  title: 'admission limits (ours only)',
  applies: (t) => t.ours && !!t.applyLimits,
  metrics: (s) => [
    {
      metric: 'admission.rate',
      label: `admission: ${compact(s.admissionTasks)} tasks, 2x${QPS}/s burst ${BURST}, accounts 2, tenants 10 (jobs/s, limit ${PROVIDERS * QPS}/s + bursts)`,
      unit: 'jobs/s',
      better: 'higher',
    },
    { metric: 'admission.violations', label: 'admission: limit violations in the audit log', unit: 'count', better: 'zero' },
  ],
  run: (ctx) =>
    inNamespace(ctx, 'adm', async () => {
      const random = seededRandom(ctx.seed);
      const jobs: BenchJob[] = [];
      for (let i = 0; i < ctx.sizes.admissionTasks; i++) {
        const account = Math.floor(ACCOUNTS * random() ** 2);
        const tenant = Math.floor(TENANTS * random() ** 2);
        jobs.push({
          i,
          priority: randomInt(random, 0, 9),
          providerKey: `provider-${account % PROVIDERS}`,
          accountId: `account-${account}`,
          tenantId: `tenant-${tenant}`,
        });
      }
      const limits: AdmissionLimits = {
        providers: Array.from({ length: PROVIDERS }, (_, p) => ({
          providerKey: `provider-${p}`,
          qps: QPS,
          burst: BURST,
          accountConcurrency: ACCOUNT_CONCURRENCY,
        })),
        defaultTenantQuota: TENANT_QUOTA,
      };
      await ctx.target.applyLimits!(limits);
      await submitAll(ctx.target, jobs, ctx.sizes.bulkChunk);

      const audit: AuditEntry[] = [];
      const seen = new Set<number>();
      const done = new Countdown(jobs.length, ctx.sizes.phaseTimeoutMs, 'admission');
      const t0 = nowMs();
      const worker = await ctx.target.startWorker({
        concurrency: WORKER_CONCURRENCY,
        // no prefetch: under tight account / tenant limits a prefetched task holds its slots
        // while it waits locally, which lowers the admitted rate (measured: PostgreSQL 813 -> 472 jobs/s)
        purpose: 'ordered',
        handler: async (started) => {
          const start = nowMs();
          await sleep(HOLD_MS);
          const end = nowMs();
          audit.push({ job: jobs[started.i], claimedAt: started.claimedAt ?? Number.NaN, start, end });
          if (!seen.has(started.i)) {
            seen.add(started.i);
            done.tick();
          }
        },
      });
      let elapsed: number;
      try {
        await done.arm();
        elapsed = nowMs() - t0;
      } finally {
        await worker.stop();
      }
      const found = auditViolations(audit);
      const [rate, violations] = admission.metrics(ctx.sizes, ctx.target);
      return [
        { ...rate, value: perSecond(jobs.length, elapsed) },
        {
          ...violations,
          value: found.account + found.tenant + found.rate,
          note: `account ${found.account}, tenant ${found.tenant}, rate ${found.rate}`,
        },
      ];
    }),
};

export function auditViolations(audit: readonly AuditEntry[]): { account: number; tenant: number; rate: number } {
  return {
    account: overLimit(audit, (e) => `${e.job.providerKey}/${e.job.accountId}`, ACCOUNT_CONCURRENCY),
    tenant: overLimit(audit, (e) => e.job.tenantId!, TENANT_QUOTA),
    rate: rateViolations(audit),
  };
}

/** Starts at which more than `limit` handlers of one key were running (ends sort before starts). */
function overLimit(audit: readonly AuditEntry[], key: (e: AuditEntry) => string, limit: number): number {
  const events: Array<[number, number, string]> = [];
  for (const e of audit) {
    events.push([e.start, 1, key(e)], [e.end, -1, key(e)]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const running = new Map<string, number>();
  let violations = 0;
  for (const [, delta, k] of events) {
    const n = (running.get(k) ?? 0) + delta;
    running.set(k, n);
    if (delta > 0 && n > limit) violations++;
  }
  return violations;
}

/** Claims (store clock) that made some window exceed burst + qps * t / 1000, per provider. */
function rateViolations(audit: readonly AuditEntry[]): number {
  const byProvider = new Map<string, number[]>();
  for (const e of audit) {
    const list = byProvider.get(e.job.providerKey!) ?? [];
    list.push(e.claimedAt);
    byProvider.set(e.job.providerKey!, list);
  }
  const burst = BURST;
  let violations = 0;
  for (const times of byProvider.values()) {
    times.sort((a, b) => a - b);
    for (let j = 0; j < times.length; j++) {
      for (let i = j - 1; i >= 0; i--) {
        const span = times[j] - times[i];
        if (span > 2_000) break;
        const allowed = burst + (QPS * (span + CLOCK_TOLERANCE_MS)) / 1000;
        if (j - i + 1 > allowed + 1e-9) {
          violations++;
          break;
        }
      }
    }
  }
  return violations;
}
