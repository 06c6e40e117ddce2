/**
 * The Redis side of `npm run bench:fairness -- --store=redis` (test/bench/fairness.bench.ts): a
 * redis-server started for the run, a fresh queue per drain, and the claim cost as the server's
 * CPU time of the claim scripts (INFO commandstats of EVALSHA, read before and after each claim:
 * only the claims count, the creates between them do not).
 */
import Redis from 'ioredis';
import type { ManualClock } from '../../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../../libs/priority-queue/src/redis';
import { startRedisServer } from '../../support/servers/redis-server';

export async function redisFairnessStores(): Promise<{
  open(clock: ManualClock, fair: boolean): Promise<RedisTaskStore>;
  claimCostNs: () => Promise<number>;
  close(): Promise<void>;
}> {
  const server = await startRedisServer();
  const conn = new Redis(server.url, { maxRetriesPerRequest: 3 });
  const opened: RedisTaskStore[] = [];
  let n = 0;
  return {
    async open(clock, fair) {
      const store = new RedisTaskStore({ connection: conn, prefix: `fairbench${++n}`, clock, fairness: fair ? 'tenant' : undefined });
      opened.push(store);
      return store;
    },
    async claimCostNs() {
      const line = (await conn.info('commandstats')).split('\n').find((l) => l.startsWith('cmdstat_evalsha:')) ?? '';
      return Number(/usec=(\d+)/.exec(line)?.[1] ?? 0) * 1000;
    },
    async close() {
      for (const s of opened) await s.close();
      conn.disconnect();
      await server.stop();
    },
  };
}
