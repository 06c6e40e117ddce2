import { sqliteTarget } from './chaos-targets';
import { describeChaos } from './describe-chaos';

// workers (one connection each: they drain through completeAndClaim) SIGKILLed mid-transaction
describeChaos('sqlite', sqliteTarget, { restarts: false, kills: false, size: { tasks: 2000, lanes: 300 } });
