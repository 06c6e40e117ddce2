import { postgresTarget } from './chaos-targets';
import { describeChaos } from './describe-chaos';

describeChaos('postgres', postgresTarget, { restarts: true });
