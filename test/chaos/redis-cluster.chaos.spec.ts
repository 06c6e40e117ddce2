import { runChaos } from './chaos-run';
import { redisClusterTarget, type RunningTarget } from './chaos-targets';

jest.setTimeout(300_000);

describe('chaos drain on redis-cluster: workers SIGKILLed (by the test and mid-store-call), connections killed server-side', () => {
  let running: RunningTarget;
  beforeAll(async () => {
    running = await redisClusterTarget();
  }, 120_000);
  afterAll(() => running?.close());

  it('every task ends as DESIGN §4 says, none ran twice at once, no limit exceeded, no slot leaked', async () => {
    const seed = Number(process.env.PQ_CHAOS_SEED ?? Math.floor(Math.random() * 1e6));
    await runChaos(running.target, { tasks: 800, workers: 3, actions: 10, leaseMs: 3000, selfKill: 0.0005, seed }).catch((e: Error) => {
      throw new Error(`seed ${seed}: ${e.message}`);
    });
  });
});
