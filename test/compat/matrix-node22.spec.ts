import { NODE_RUNTIMES } from './matrix';
import { matrixSuite } from './support/matrix-suite';

matrixSuite('node22', NODE_RUNTIMES.node22);
