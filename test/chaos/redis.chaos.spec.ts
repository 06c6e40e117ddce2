import { redisTarget } from './chaos-targets';
import { describeChaos } from './describe-chaos';

describeChaos('redis', redisTarget, { restarts: true });
