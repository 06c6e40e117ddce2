import { redisTarget } from './chaos-targets';
import { describeChaos } from './describe-chaos';

// the Worker on Redis sends its completes with its claims (complete_and_claim): a restart and killed connections under a wide drain
describeChaos('redis, many lanes', redisTarget, { restarts: true, size: { tasks: 2000, lanes: 300 } });
