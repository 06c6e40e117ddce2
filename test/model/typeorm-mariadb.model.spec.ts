import { typeOrmStoreFactory } from '../typeorm/typeorm-dialects';
import { describeModelBasedTest } from './model-based';

// Real database (see test/typeorm/typeorm-dialects.ts); never skipped.
jest.setTimeout(240_000);
describeModelBasedTest(typeOrmStoreFactory('mariadb'), { wideRuns: 20 });
