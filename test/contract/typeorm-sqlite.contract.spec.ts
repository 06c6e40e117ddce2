import { typeOrmStoreFactory } from '../typeorm/typeorm-dialects';
import { describeTaskStoreContract } from './task-store.contract';

// A temp SQLite file through better-sqlite3; never skipped.
describeTaskStoreContract(typeOrmStoreFactory('sqlite'));
