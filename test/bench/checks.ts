import type { Cell } from './lib/report';

/** The performance targets of issues 3, 4 and 6, checked against one run. */
export interface Check {
  name: string;
  /** null: could not be checked in this run (target or scenario missing). */
  ok: boolean | null;
  detail: string;
}

export function checkTargets(cells: readonly Cell[]): Check[] {
  const get = (target: string, metric: string) => cells.find((c) => c.target === target && c.metric === metric)?.value ?? null;
  const checks: Check[] = [];
  const atLeast = (name: string, ours: string, peer: string, metric: string, factor: number) => {
    const a = get(ours, metric);
    const b = get(peer, metric);
    if (a === null || b === null) return checks.push({ name, ok: null, detail: 'not measured' });
    const r = a / b;
    checks.push({ name, ok: r >= factor, detail: `${r.toFixed(2)}x (${Math.round(a)} vs ${Math.round(b)} jobs/s)` });
  };
  atLeast('Redis drain >= 1.5x BullMQ', 'ours-redis', 'bullmq', 'drain', 1.5);
  atLeast('Redis bulk submit >= 1.5x BullMQ addBulk', 'ours-redis', 'bullmq', 'submit-bulk', 1.5);
  atLeast('PostgreSQL drain >= 1.5x graphile-worker', 'ours-postgres', 'graphile-worker', 'drain', 1.5);
  atLeast('PostgreSQL drain >= 3x pg-boss', 'ours-postgres', 'pg-boss', 'drain', 3);
  atLeast('PostgreSQL bulk submit >= graphile-worker', 'ours-postgres', 'graphile-worker', 'submit-bulk', 1);
  const ours = [...new Set(cells.filter((c) => c.target.startsWith('ours-')).map((c) => c.target))];
  for (const t of ours) {
    const g = get(t, 'backlog.growth');
    checks.push({
      name: `${t}: per-claim cost at the largest backlog within 1.3x of the smallest`,
      ok: g === null ? null : g <= 1.3,
      detail: g === null ? 'not measured' : `${g.toFixed(2)}x`,
    });
    const tg = get(t, 'backlog.terminal-growth');
    if (tg !== null) {
      checks.push({ name: `${t}: per-claim cost with finished rows within 1.3x`, ok: tg <= 1.3, detail: `${tg.toFixed(2)}x` });
    }
    const ov = get(t, 'order.violations');
    checks.push({ name: `${t}: order violations 0`, ok: ov === null ? null : ov === 0, detail: ov === null ? 'not measured' : `${ov}%` });
    const av = get(t, 'admission.violations');
    checks.push({ name: `${t}: admission violations 0`, ok: av === null ? null : av === 0, detail: av === null ? 'not measured' : String(av) });
  }
  return checks;
}
