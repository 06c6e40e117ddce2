import { NODE_RUNTIMES } from './matrix';
import { matrixSuite } from './support/matrix-suite';

matrixSuite('node20', NODE_RUNTIMES.node20);
