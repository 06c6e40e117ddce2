import type { Cell } from './lib/report';

/** The performance targets of issues 3, 4, 6 and 15, checked against one run. */
export interface Check {
  name: string;
  /** null: could not be checked in this run (target or scenario missing). */
  ok: boolean | null;
  detail: string;
}

export function checkTargets(cells: readonly Cell[]): Check[] {
  const get = (target: string, metric: string) => cells.find((c) => c.target === target && c.metric === metric)?.value ?? null;
  const has = (target: string) => cells.some((c) => c.target === target);
  const checks: Check[] = [];
  const notMeasured = (name: string) => checks.push({ name, ok: null, detail: 'not measured' });
  /** ours / peer >= factor for rates (higher is better). */
  const atLeast = (name: string, ours: string, peer: string, metric: string, factor: number, unit = 'jobs/s') => {
    const a = get(ours, metric);
    const b = get(peer, metric);
    if (a === null || b === null) return notMeasured(name);
    const r = a / b;
    checks.push({ name, ok: r >= factor, detail: `${r.toFixed(2)}x (${Math.round(a)} vs ${Math.round(b)} ${unit})` });
  };
  /** ours <= peer (or a fixed bound) for costs and latencies. */
  const atMost = (name: string, value: number | null, bound: number | null, unit: string) => {
    if (value === null || bound === null) return notMeasured(name);
    checks.push({ name, ok: value <= bound, detail: `${+value.toFixed(2)} vs ${+bound.toFixed(2)} ${unit}` });
  };

  atLeast('Redis bulk submit >= 1.5x BullMQ addBulk', 'ours-redis', 'bullmq', 'submit-bulk', 1.5);
  atLeast('PostgreSQL drain >= 3x pg-boss', 'ours-postgres', 'pg-boss', 'drain', 3);
  atLeast('PostgreSQL bulk submit >= graphile-worker', 'ours-postgres', 'graphile-worker', 'submit-bulk', 1);

  // issue 15 §2, with removeOnComplete off (ours-*) and on (ours-*+roc, when run)
  for (const roc of ['', '+roc']) {
    const pg = `ours-postgres${roc}`;
    const redis = `ours-redis${roc}`;
    const tag = roc ? ' (removeOnComplete on)' : '';
    if (!roc || has(pg)) {
      atLeast(`PostgreSQL drain >= 1.5x graphile-worker${tag}`, pg, 'graphile-worker', 'drain', 1.5);
      atLeast(`PostgreSQL multi-process >= 1.3x graphile-worker${tag}`, pg, 'graphile-worker', 'multi-process', 1.3);
      atMost(`PostgreSQL latency p99 <= graphile-worker's${tag}`, get(pg, 'latency.p99'), get('graphile-worker', 'latency.p99'), 'ms');
      atLeast(`PostgreSQL order throughput at concurrency 1 >= graphile-worker${tag}`, pg, 'graphile-worker', 'order.rate', 1);
    }
    if (!roc || has(redis)) {
      atLeast(`Redis drain >= 2x BullMQ${tag}`, redis, 'bullmq', 'drain', 2);
      atLeast(`Redis multi-process >= 2x BullMQ${tag}`, redis, 'bullmq', 'multi-process', 2);
      atLeast(`Redis single submit >= 1.2x BullMQ add${tag}`, redis, 'bullmq', 'submit-one', 1.2);
    }
  }

  // issue 15 §3: quiet when idle, without costing latency
  for (const [ours, peer] of [
    ['ours-redis', 'bullmq'],
    ['ours-postgres', 'graphile-worker'],
  ] as const) {
    const levels = [...new Set(cells.filter((c) => c.target === ours && /^idle\.\d+\.calls$/.test(c.metric)).map((c) => Number(c.metric.split('.')[1])))];
    if (levels.length === 0) notMeasured(`${ours}: idle workers make <= 1 store round trip/s each`);
    for (const n of levels.sort((a, b) => a - b)) {
      const calls = get(ours, `idle.${n}.calls`);
      atMost(`${ours}: ${n} idle worker(s) make <= 1 store round trip/s each`, calls === null ? null : calls / n, 1, 'calls/s per worker');
      atMost(`${ours}: wake-up of a task on ${n} idle worker(s), p50 <= ${peer}'s latency p99`, get(ours, `idle.${n}.wake`), get(peer, 'latency.p99'), 'ms');
    }
  }
  atMost('SQLite latency p50 <= 5 ms', get('ours-sqlite', 'latency.p50'), has('ours-sqlite') ? 5 : null, 'ms');
  atMost('MariaDB latency p50 <= 5 ms', get('ours-mariadb', 'latency.p50'), has('ours-mariadb') ? 5 : null, 'ms');

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
