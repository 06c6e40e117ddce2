import { settledWithin } from '../../core/timers';
import type { RedisConnection } from './connection-check';

/** How long a closing connection waits for QUIT's reply (pending replies first) before it drops the socket. */
export const QUIT_WAIT_MS = 1000;

/**
 * Closes a connection: QUIT when connected, so that replies still pending arrive first; but a
 * server that does not answer (a partition: the QUIT hangs, nothing fails) must not hold a
 * shutdown, so after `waitMs` the socket is dropped. A connection that is not connected stops
 * reconnecting at once (no timer or socket is left to keep the process alive).
 */
export async function quitWithin(c: RedisConnection, waitMs = QUIT_WAIT_MS): Promise<void> {
  if (c.status === 'end') return;
  if (c.status !== 'ready') return c.disconnect();
  const quit = c.quit();
  if (!(await settledWithin(quit, waitMs)) || (await quit.then(() => false, () => true))) c.disconnect();
}
