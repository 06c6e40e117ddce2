import { typeOrmStoreFactory } from '../typeorm/typeorm-dialects';
import { describeTaskStoreContract } from './task-store.contract';

// A real PostgreSQL 15 server (Debian package) on a free loopback port; never skipped.
jest.setTimeout(120_000);
describeTaskStoreContract(typeOrmStoreFactory('postgres'));
