import { redisStoreFactory } from '../redis/support/redis-store-factory';
import { describeTraces } from './describe-traces';

jest.setTimeout(300_000);
describeTraces(redisStoreFactory('trace'), { traces: 1, agingTraces: 1, ops: 1000, backlog: 300 });
