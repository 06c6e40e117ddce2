import { StoreUnavailableError } from '../../core/errors';
import { Messages } from '../../core/messages';
import { describeRedis, type RedisConnection } from './connection-check';

/** A start-up that waits longer than this says what it waits for (sooner on a connection error). */
const QUIET_WAIT_MS = 1000;

/**
 * Resolves when the connection is ready; logs once what it waits for when Redis does not answer
 * (at the first connection error, or after a second), and rejects with StoreUnavailableError
 * after `timeoutMs`. A connection made with `lazyConnect` is connected here.
 */
export async function waitForRedis(c: RedisConnection, timeoutMs: number, log: (message: string) => void): Promise<void> {
  if (c.status === 'ready') return;
  if (c.status === 'end' || c.status === 'close') throw new StoreUnavailableError(Messages.redisClosed(describeRedis(c)));
  const where = describeRedis(c);
  let lastError: string | null = null;
  let said = false;
  const say = () => {
    if (said) return;
    said = true;
    log(Messages.redisWaiting(where, c.status, lastError, timeoutMs));
  };
  let onReady!: () => void;
  let onError!: (e: unknown) => void;
  let quiet: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onReady = resolve;
      onError = (e) => {
        lastError = e instanceof Error ? e.message || e.constructor.name : String(e);
        say();
      };
      c.on('ready', onReady);
      c.on('error', onError);
      quiet = setTimeout(say, Math.min(QUIET_WAIT_MS, timeoutMs));
      deadline = setTimeout(() => reject(new StoreUnavailableError(Messages.redisUnavailable(where, timeoutMs, lastError))), timeoutMs);
      if (c.status === 'wait') c.connect().catch(onError);
    });
  } finally {
    clearTimeout(quiet);
    clearTimeout(deadline);
    c.off('ready', onReady);
    c.off('error', onError);
  }
}
