import type { Scenario } from '../scenario';
import { submitOne } from './submit-one';
import { submitBulk } from './submit-bulk';
import { drain } from './drain';
import { order } from './order';
import { backlog } from './backlog';
import { latency } from './latency';
import { admission } from './admission';
import { multiProcess } from './multi-process';

/** Every scenario, in table order. */
export const SCENARIOS: readonly Scenario[] = [submitOne, submitBulk, drain, order, backlog, latency, admission, multiProcess];
