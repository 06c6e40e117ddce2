import { typeOrmStoreFactory } from '../typeorm/typeorm-dialects';
import { describeTaskStoreContract } from './task-store.contract';

// A real MariaDB server (Debian package mariadb-server) on a free loopback port; never skipped.
jest.setTimeout(120_000);
describeTaskStoreContract(typeOrmStoreFactory('mariadb'));
