import { redisClusterTarget } from './chaos-targets';
import { describeChaos } from './describe-chaos';

describeChaos('redis-cluster', redisClusterTarget, { restarts: false });
