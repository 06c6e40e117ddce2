import { compact, inNamespace, makeJobs, submitAll, type Measurement, type Scenario, type ScenarioContext } from '../scenario';
import { Countdown, nowMs } from '../lib/stats';

/**
 * The claims are timed in windows of at least 200 claims (two pg-boss batches), at most 10; the
 * first warms the worker up, the cost reported is the MEDIAN of the others, so a burst of load
 * from elsewhere on the machine moves it little.
 */
const MAX_WINDOWS = 10;
const MIN_WINDOW = 200;

/**
 * Backlog scaling: claim and finish `backlogClaims` tasks while `level` more stay pending, for
 * each level; on SQL targets also with `terminalRows` finished rows in the table. Reports the
 * time per claim+finish (µs) and how it grows from the smallest to the largest backlog.
 */
export const backlog: Scenario = {
  id: 'backlog',
  title: 'backlog scaling',
  applies: () => true,
  metrics: (s, target) => {
    const rows: Array<Omit<Measurement, 'value'>> = s.backlogLevels.map((level) => ({
      metric: `backlog.${level}`,
      label: `claim+finish ${compact(s.backlogClaims)} with ${compact(level)} pending (µs/claim, median window)`,
      unit: 'µs',
      better: 'lower' as const,
    }));
    if (s.terminalRows > 0 && target.seedTerminal) {
      rows.push({
        metric: 'backlog.terminal',
        label: `... with ${compact(s.backlogLevels[0])} pending + ${compact(s.terminalRows)} finished rows (µs/claim)`,
        unit: 'µs',
        better: 'lower',
      });
    }
    rows.push({
      metric: 'backlog.growth',
      label: `per-claim cost ${compact(s.backlogLevels[s.backlogLevels.length - 1])} / ${compact(s.backlogLevels[0])} pending (x, target <= 1.3)`,
      unit: 'x',
      better: 'lower',
    });
    if (s.terminalRows > 0 && target.seedTerminal) {
      rows.push({
        metric: 'backlog.terminal-growth',
        label: `per-claim cost with / without ${compact(s.terminalRows)} finished rows (x, target <= 1.3)`,
        unit: 'x',
        better: 'lower',
      });
    }
    return rows;
  },
  async run(ctx) {
    const rows = backlog.metrics(ctx.sizes, ctx.target);
    const byMetric = new Map(rows.map((r) => [r.metric, r]));
    const out: Measurement[] = [];
    const costs = new Map<string, number>();
    for (const level of ctx.sizes.backlogLevels) {
      const cost = await measureLevel(ctx, `b${level}`, level, 0);
      costs.set(`backlog.${level}`, cost);
      out.push({ ...byMetric.get(`backlog.${level}`)!, value: cost });
    }
    if (byMetric.has('backlog.terminal')) {
      const cost = await measureLevel(ctx, 'bterm', ctx.sizes.backlogLevels[0], ctx.sizes.terminalRows);
      costs.set('backlog.terminal', cost);
      out.push({ ...byMetric.get('backlog.terminal')!, value: cost });
    }
    const first = costs.get(`backlog.${ctx.sizes.backlogLevels[0]}`)!;
    const last = costs.get(`backlog.${ctx.sizes.backlogLevels[ctx.sizes.backlogLevels.length - 1]}`)!;
    out.push({ ...byMetric.get('backlog.growth')!, value: last / first });
    if (costs.has('backlog.terminal')) {
      out.push({ ...byMetric.get('backlog.terminal-growth')!, value: costs.get('backlog.terminal')! / first });
    }
    return out;
  },
};

async function measureLevel(ctx: ScenarioContext, suffix: string, level: number, terminalRows: number): Promise<number> {
  return inNamespace(ctx, suffix, async () => {
    const claims = ctx.sizes.backlogClaims;
    if (terminalRows > 0) {
      const t = nowMs();
      await ctx.target.seedTerminal!(terminalRows);
      ctx.log(`seeded ${compact(terminalRows)} finished rows in ${((nowMs() - t) / 1000).toFixed(1)} s`);
    }
    const t = nowMs();
    await submitAll(ctx.target, makeJobs(level + claims, ctx.seed + level), Math.max(ctx.sizes.bulkChunk, 5_000));
    ctx.log(`backlog of ${compact(level + claims)} written in ${((nowMs() - t) / 1000).toFixed(1)} s`);
    const windowCount = Math.max(3, Math.min(MAX_WINDOWS, Math.floor(claims / MIN_WINDOW)));
    const per = Math.max(1, Math.floor(claims / windowCount));
    const marks: number[] = [];
    const done = new Countdown(per * windowCount, ctx.sizes.phaseTimeoutMs, `backlog ${level}`);
    const worker = await ctx.target.startWorker({
      concurrency: ctx.sizes.concurrency,
      purpose: 'throughput',
      handler: () => {
        if (done.count % per === 0) marks.push(nowMs());
        done.tick();
        if (done.count === done.target) marks.push(nowMs());
      },
    });
    try {
      await done.arm();
    } finally {
      await worker.stop();
    }
    const windows: number[] = [];
    for (let w = 2; w < marks.length; w++) windows.push(((marks[w] - marks[w - 1]) * 1000) / per);
    windows.sort((a, b) => a - b);
    return windows[Math.floor(windows.length / 2)];
  });
}
