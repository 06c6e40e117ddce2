import { postgresOneConnectionTarget } from './chaos-targets';
import { describeChaos } from './describe-chaos';

describeChaos('postgres, workers on one connection (completeAndClaim)', postgresOneConnectionTarget, { restarts: true, size: { tasks: 2000, lanes: 300 } });
