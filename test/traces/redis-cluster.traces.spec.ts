import { redisClusterStoreFactory } from '../redis/support/redis-cluster-store-factory';
import { describeTraces } from './describe-traces';

jest.setTimeout(300_000);
describeTraces(redisClusterStoreFactory('trace'), { traces: 1, agingTraces: 0, ops: 1000, backlog: 300 });
