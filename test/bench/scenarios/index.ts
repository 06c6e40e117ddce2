import type { Scenario } from '../scenario';
import { submitOne } from './submit-one';
import { submitBulk } from './submit-bulk';
import { drain, drainDefaults } from './drain';
import { order } from './order';
import { backlog } from './backlog';
import { latency, latencyDefaults } from './latency';
import { admission } from './admission';
import { multiProcess, multiProcessDefaults } from './multi-process';
import { idle } from './idle';

/** Every scenario, in table order (a `-defaults` one right after its tuned one). */
export const SCENARIOS: readonly Scenario[] = [
  submitOne,
  submitBulk,
  drain,
  drainDefaults,
  order,
  backlog,
  latency,
  latencyDefaults,
  admission,
  multiProcess,
  multiProcessDefaults,
  idle,
];
