import { NODE_RUNTIMES } from './matrix';
import { matrixSuite } from './support/matrix-suite';

matrixSuite('node24', NODE_RUNTIMES.node24);
