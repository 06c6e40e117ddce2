import type { Cluster, Redis } from 'ioredis';
import type { WakeReason } from '../../core/task-store.port';
import { quitWithin } from './quit';

/**
 * subscribe() of the Redis store: one duplicate connection per subscription listens on the
 * queue's wake channel, which scripts publish on when work may have become claimable (tasks
 * created or moved in due, slots freed, limits changed, tasks recovered). Bursts of messages
 * are coalesced into one listener call per event-loop turn. ioredis reconnects and
 * re-subscribes by itself; since messages published meanwhile are lost (pub/sub delivers to
 * the connected only), the listener is called once when the connection is ready again.
 */
export class WakeSubscriptions {
  private readonly open = new Set<Redis | Cluster>();

  constructor(
    private readonly connection: Redis | Cluster,
    private readonly channel: string,
  ) {}

  async subscribe(listener: (what?: WakeReason) => void): Promise<() => Promise<void>> {
    const sub = this.connection.duplicate();
    this.open.add(sub);
    let scheduled = false;
    let anything = false; // a message of this turn was not a create's ('s'): no reason to give
    const call = (submissionsOnly = false) => {
      anything ||= !submissionsOnly;
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        const what = anything ? undefined : 'submissions';
        scheduled = false;
        anything = false;
        if (this.open.has(sub)) listener(what);
      });
    };
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) call(message === 's');
    });
    sub.on('error', () => undefined); // reconnects on its own; errors surface on the main connection
    try {
      await sub.subscribe(this.channel);
    } catch (e) {
      await this.release(sub);
      throw e;
    }
    // 'ready' comes again after every reconnect; ioredis sends its SUBSCRIBE right after the
    // event, so the PING queued behind it answers once the channel is listened to again
    sub.on('ready', () => setImmediate(() => void sub.ping().then(() => call(), () => undefined)));
    return () => this.release(sub);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((s) => this.release(s)));
  }

  private async release(sub: Redis | Cluster): Promise<void> {
    if (!this.open.delete(sub)) return;
    sub.removeAllListeners('message');
    sub.removeAllListeners('ready');
    await quitWithin(sub);
  }
}
