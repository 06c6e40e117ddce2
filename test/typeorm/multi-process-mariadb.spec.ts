import { multiProcessSuite } from './multi-process-suite';

multiProcessSuite('mariadb');
