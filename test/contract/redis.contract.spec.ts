import { redisStoreFactory } from '../redis/support/redis-store-factory';
import { describeTaskStoreContract } from './task-store.contract';

describeTaskStoreContract(redisStoreFactory('contract'));
