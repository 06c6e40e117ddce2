import { runChaos, type ChaosOptions } from './chaos-run';
import type { RunningTarget } from './chaos-targets';

/** The size of every chaos drain (test/chaos/chaos-run.ts); PQ_CHAOS_SEED=<n> replays one. */
const OPTIONS: Omit<ChaosOptions, 'seed'> = { tasks: 800, workers: 3, actions: 10, leaseMs: 3000, selfKill: 0.0005 };

/**
 * One chaos drain on a server started for the spec (`start`, from chaos-targets.ts); `size`
 * overrides OPTIONS (more tasks, `lanes`).
 */
export function describeChaos(name: string, start: () => Promise<RunningTarget>, opts: { restarts: boolean; kills?: boolean; size?: Partial<Omit<ChaosOptions, 'seed'>> }): void {
  jest.setTimeout(300_000);
  const size = { ...OPTIONS, ...opts.size };
  const faults = `${size.tasks} tasks${size.lanes ? ` over ${size.lanes} exclusive keys` : ''}; workers SIGKILLed (by the test and mid-store-call)${opts.kills === false ? '' : ', connections killed server-side'}${opts.restarts ? ', the server restarted' : ''}`;
  describe(`chaos drain on ${name}: ${faults}`, () => {
    let running: RunningTarget;
    beforeAll(async () => {
      running = await start();
    }, 120_000);
    afterAll(() => running?.close());

    it('every task ends as DESIGN §4 says, exactly once; none ran twice at once, no limit exceeded, no slot leaked', async () => {
      const seed = Number(process.env.PQ_CHAOS_SEED ?? Math.floor(Math.random() * 1e6));
      await runChaos(running.target, { ...OPTIONS, ...opts.size, seed }).catch((e: Error) => {
        throw new Error(`seed ${seed} (replay: PQ_CHAOS_SEED=${seed}): ${e.message}`);
      });
    });
  });
}
