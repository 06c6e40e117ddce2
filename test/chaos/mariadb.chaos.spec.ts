import { mariadbTarget } from './chaos-targets';
import { describeChaos } from './describe-chaos';

describeChaos('mariadb', mariadbTarget, { restarts: true });
