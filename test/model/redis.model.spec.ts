import { redisStoreFactory } from '../redis/support/redis-store-factory';
import { describeModelBasedTest } from './model-based';

jest.setTimeout(240_000);
describeModelBasedTest(redisStoreFactory('model'), { wideRuns: 30, fairRuns: 30, wideFairRuns: 10 });
