import { demoSuite } from './support/demo-suite';

demoSuite('memory', () => ({ kind: 'memory' }));
