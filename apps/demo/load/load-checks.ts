import type { CheckResult, TimelineEntry, VendorStats } from './load-types';

/**
 * "Urgent work starts before any archive job still queued": for each job J of `urgent`, no
 * archive job of the same vendor that was still waiting when J was created (started after
 * J.createdAt) may start before J. Times are the store clock, compared strictly, so a tie
 * within one millisecond never counts as an overtake.
 *
 * Only the same vendor is compared: jobs of different vendors never compete (different
 * admission limits), and a job held by its own vendor's limit must not stop the other vendor
 * (no head-of-line blocking).
 */
export function checkStartsBeforeQueuedArchive(name: string, urgent: readonly TimelineEntry[], archive: readonly TimelineEntry[]): CheckResult {
  const overtakes: string[] = [];
  for (const j of urgent) {
    if (j.startedAt === null) {
      overtakes.push(`${j.taskId} never started`);
      continue;
    }
    const jumped = archive.filter(
      (x) => x.providerKey === j.providerKey && x.startedAt !== null && x.startedAt > j.createdAt && x.startedAt < j.startedAt!,
    );
    if (jumped.length > 0) overtakes.push(`${j.taskId} (${j.kind}) overtaken by ${jumped.length} queued archive job(s)`);
  }
  const queuedAhead = urgent.map((j) => archive.filter((x) => x.providerKey === j.providerKey && (x.startedAt ?? Infinity) > j.createdAt).length);
  const [lo, hi] = [Math.min(...queuedAhead), Math.max(...queuedAhead)];
  const detail =
    overtakes.length === 0
      ? `${urgent.length} job(s), each with ${lo === hi ? lo : `${lo}-${hi}`} archive job(s) of its vendor still queued at its creation; none overtook`
      : overtakes.slice(0, 5).join('; ');
  return { name, ok: urgent.length > 0 && overtakes.length === 0, detail };
}

/** Each vendor saw no contract violation, no second with more submits than its rate, no account over its limit. */
export function checkVendorLimits(vendors: readonly VendorStats[]): CheckResult[] {
  return vendors.map((v) => {
    const problems: string[] = [];
    if (v.violations.rate > 0) problems.push(`${v.violations.rate} submit(s) over the rate`);
    if (v.violations.accountConcurrency > 0) problems.push(`${v.violations.accountConcurrency} submit(s) over the account limit`);
    if (v.peakSubmitsPerSecond > v.contract.submitsPerSecond) {
      problems.push(`peak ${v.peakSubmitsPerSecond} submits/s > ${v.contract.submitsPerSecond}`);
    }
    const limit = v.contract.maxConcurrentJobsPerAccount;
    const peakJobs = Math.max(0, ...Object.values(v.peakConcurrentJobsByAccount));
    if (limit !== null && peakJobs > limit) problems.push(`peak ${peakJobs} jobs in one account > ${limit}`);
    return {
      name: `${v.name} limits never exceeded`,
      ok: problems.length === 0,
      detail:
        problems.join('; ') ||
        `peak ${v.peakSubmitsPerSecond}/${v.contract.submitsPerSecond} submits/s, peak ${peakJobs}/${limit ?? 'unlimited'} jobs per account, 0 violations`,
    };
  });
}
