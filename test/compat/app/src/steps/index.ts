import type { CompatStep } from '../step.js';
import { bullmqSideBySide } from './bullmq-side-by-side.js';
import { dashboard } from './dashboard.js';
import { exceptionFilter } from './exception-filter.js';
import { handlerSucceeds } from './handler-succeeds.js';
import { health } from './health.js';
import { namedQueue } from './named-queue.js';

/**
 * The steps of the compatibility app, in the order they run on each store. The test writes this
 * file anew in each generated app with the steps that app gets (test/compat/steps.ts); this copy
 * lists them all, so that npm run typecheck checks every step against the workspace's versions.
 */
export const ALL_STEPS: CompatStep[] = [handlerSucceeds, namedQueue, health, exceptionFilter, dashboard, bullmqSideBySide];
