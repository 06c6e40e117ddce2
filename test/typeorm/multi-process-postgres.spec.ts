import { multiProcessSuite } from './multi-process-suite';

multiProcessSuite('postgres');
