import type { CheckResult, TimelineEntry, VendorStats } from './load-types';
import { percentile } from './percentile';

const KIND_ORDER = ['INCIDENT_RECOVERY', 'INTERACTIVE', 'REINDEX', 'BATCH_ARCHIVE'];
const PLAN_ORDER = ['ENTERPRISE', 'PRO', 'FREE'];

/** Renders rows as a Markdown table (readable in a terminal, pasteable into docs). */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const cells = [header, ...rows].map((r) => r.map(String));
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(cells[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

/** Wait (created -> first submit started) and total time per kind and plan, in ms. */
export function waitTable(entries: readonly TimelineEntry[]): string {
  const groups = new Map<string, TimelineEntry[]>();
  for (const e of entries) {
    const key = `${e.kind}|${e.plan}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const keys = [...groups.keys()].sort((a, b) => {
    const [ka, pa] = a.split('|');
    const [kb, pb] = b.split('|');
    return KIND_ORDER.indexOf(ka) - KIND_ORDER.indexOf(kb) || PLAN_ORDER.indexOf(pa) - PLAN_ORDER.indexOf(pb);
  });
  const rows = keys.map((key) => {
    const list = groups.get(key)!;
    const waits = list.filter((e) => e.startedAt !== null).map((e) => e.startedAt! - e.createdAt);
    const totals = list.filter((e) => e.finishedAt !== null).map((e) => e.finishedAt! - e.createdAt);
    const [kind, plan] = key.split('|');
    return [kind, plan, list[0].providerKey, list[0].priority, list.length, ms(percentile(waits, 50)), ms(percentile(waits, 95)), ms(Math.max(...waits)), ms(percentile(totals, 50))];
  });
  return markdownTable(['kind', 'plan', 'vendor', 'priority', 'jobs', 'wait p50', 'wait p95', 'wait max', 'done p50'], rows);
}

/** One letter per plan in startOrder's lines. */
const PLAN_LETTER: Record<string, string> = { ENTERPRISE: 'E', PRO: 'P', FREE: 'F' };

/**
 * The plans of the first `n` archive jobs started on each vendor, in start order: with fair share
 * the tenants of one vendor interleave (PPFPPF... with weights PRO 2, FREE 1), without it one
 * tenant's batch comes first (PPPP...).
 */
export function startOrder(entries: readonly TimelineEntry[], n = 36): string {
  const byVendor = new Map<string, TimelineEntry[]>();
  for (const e of entries) if (e.kind === 'BATCH_ARCHIVE' && e.startedSeq !== null) byVendor.set(e.providerKey, [...(byVendor.get(e.providerKey) ?? []), e]);
  return [...byVendor.keys()]
    .sort()
    .map((vendor) => {
      const started = byVendor.get(vendor)!.sort((a, b) => a.startedSeq! - b.startedSeq!);
      const letters = started.slice(0, n).map((e) => PLAN_LETTER[e.plan ?? ''] ?? '?').join('');
      return `${vendor}: ${letters}${started.length > n ? '...' : ''} (first ${Math.min(n, started.length)} of ${started.length})`;
    })
    .join('\n');
}

export function vendorTable(vendors: readonly VendorStats[]): string {
  const rows = vendors.map((v) => [
    v.name,
    v.submitRequests,
    v.accepted,
    v.injected429,
    v.injected503,
    `${v.peakSubmitsPerSecond} (limit ${v.contract.submitsPerSecond})`,
    `${Math.max(0, ...Object.values(v.peakConcurrentJobsByAccount))} (limit ${v.contract.maxConcurrentJobsPerAccount ?? 'none'})`,
    v.violations.rate + v.violations.accountConcurrency,
  ]);
  return markdownTable(['vendor', 'submits', 'accepted', '429 injected', '503 injected', 'highest submits/s', 'peak jobs/account', 'violations'], rows);
}

export function checksList(checks: readonly CheckResult[]): string {
  return checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`).join('\n');
}

function ms(v: number): string {
  return Number.isFinite(v) ? `${Math.round(v)} ms` : '-';
}
