import { ManualClock } from '../../libs/priority-queue/src/core';
import type { StoreFactory } from '../contract/task-store.contract';
import { T0 } from '../contract/harness';
import { TraceRun } from './trace-runner';
import { generateTrace, U, type TraceOp } from './trace-world';

export interface TraceSuiteOptions {
  /** Traces without aging, then with aging (agingIntervalMs = U). */
  traces: number;
  agingTraces: number;
  /** Ops per trace and tasks of its opening backlog. */
  ops: number;
  backlog: number;
  /** Full state compared every this many ops (and at the end). */
  compareEvery?: number;
}

/**
 * Scheduling traces replayed through the public API on one store (see trace-runner.ts). The
 * seed changes per run; PQ_TRACE_SEED=<n> replays one (the failure message prints it).
 */
export function describeTraces(factory: StoreFactory, suite: TraceSuiteOptions): void {
  // a longer soak by hand: PQ_TRACE_RUNS=<traces of each kind> PQ_TRACE_OPS=<ops per trace>
  const runs = process.env.PQ_TRACE_RUNS ? Number(process.env.PQ_TRACE_RUNS) : undefined;
  const opts: TraceSuiteOptions = {
    ...suite,
    traces: runs ?? suite.traces,
    agingTraces: runs ?? suite.agingTraces,
    ops: process.env.PQ_TRACE_OPS ? Number(process.env.PQ_TRACE_OPS) : suite.ops,
  };
  const fixed = process.env.PQ_TRACE_SEED;
  const base = fixed !== undefined ? Number(fixed) : Math.floor(Math.random() * 2 ** 31);
  const spec = expect.getState().testPath ?? 'test/traces';
  const soakTimeout = runs !== undefined || process.env.PQ_TRACE_OPS ? 6 * 3600_000 : undefined;

  async function runTrace(seed: number, agingIntervalMs: number): Promise<{ starts: number; tasks: number }> {
    const clock = new ManualClock(T0);
    const store = await factory.create({ clock, agingIntervalMs: agingIntervalMs || undefined });
    await store.init();
    const run = new TraceRun({ store, clock, agingIntervalMs });
    const ops = generateTrace(seed, opts);
    let i = -1;
    const t0 = Date.now();
    try {
      for (i = 0; i < ops.length; i++) {
        await run.apply(ops[i]);
        if ((i + 1) % (opts.compareEvery ?? 150) === 0) await run.compareState();
      }
      i = ops.length;
      const t1 = Date.now();
      await run.compareState();
      await run.drain();
      if (process.env.PQ_TRACE_DEBUG) console.log(JSON.stringify({ seed, ops: t1 - t0, drain: Date.now() - t1, ticks: run.ticks, starts: run.starts, tasks: run.model.tasks.length }));
      expect(run.violations).toEqual([]);
      return { starts: run.starts, tasks: run.model.tasks.length };
    } catch (e) {
      const where = i < ops.length ? `op #${i} ${describeOp(ops[i])}` : 'the final check / drain';
      const msg = e instanceof Error ? e.message : String(e);
      throw new Error(`${factory.name} trace seed ${seed} (aging ${agingIntervalMs}) failed at ${where}\nreplay: PQ_TRACE_SEED=${seed} PQ_TRACE_AGING=${agingIntervalMs} npx jest ${spec}\n${msg}`);
    } finally {
      await run.close();
      await store.close();
    }
  }

  describe(`scheduling traces through the public API: ${factory.name}`, () => {
    afterAll(async () => {
      await factory.teardown?.();
    });

    const label = `${opts.ops} ops, ${opts.backlog}-task backlog`;
    it(`${fixed !== undefined ? 1 : opts.traces} random traces (${label}): start order, limits and events as the reference model`, async () => {
      const seeds = fixed !== undefined ? [base] : Array.from({ length: opts.traces }, (_, i) => base + i);
      for (const seed of seeds) {
        const r = await runTrace(seed, fixed !== undefined ? Number(process.env.PQ_TRACE_AGING ?? 0) : 0);
        expect(r.starts).toBeGreaterThan(opts.backlog / 4);
      }
    }, soakTimeout);

    if (opts.agingTraces > 0 && fixed === undefined) {
      it(`${opts.agingTraces} random traces with aging (T = ${U} ms)`, async () => {
        for (let i = 0; i < opts.agingTraces; i++) await runTrace(base + 1000 + i, U);
      }, soakTimeout);
    }
  });
}

function describeOp(op: TraceOp): string {
  if (op.kind === 'submit') return JSON.stringify({ ...op, specs: op.specs.length > 3 ? `${op.specs.length} specs` : op.specs });
  return JSON.stringify(op);
}
