import { typeOrmStoreFactory } from '../typeorm/typeorm-dialects';
import { describeTraces } from './describe-traces';

jest.setTimeout(300_000);
describeTraces(typeOrmStoreFactory('postgres'), { traces: 1, agingTraces: 1, ops: 1000, backlog: 300 });
