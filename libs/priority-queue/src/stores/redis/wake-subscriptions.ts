import type { Cluster, Redis } from 'ioredis';

/**
 * subscribe() of the Redis store: one duplicate connection per subscription listens on the
 * queue's wake channel, which scripts publish on when work may have become claimable (tasks
 * created or moved in due, slots freed, limits changed). Bursts of messages are coalesced into
 * one listener call per event-loop turn. ioredis reconnects and re-subscribes by itself.
 */
export class WakeSubscriptions {
  private readonly open = new Set<Redis | Cluster>();

  constructor(
    private readonly connection: Redis | Cluster,
    private readonly channel: string,
  ) {}

  async subscribe(listener: () => void): Promise<() => Promise<void>> {
    const sub = this.connection.duplicate();
    this.open.add(sub);
    let scheduled = false;
    sub.on('message', (channel: string) => {
      if (channel !== this.channel || scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        listener();
      });
    });
    sub.on('error', () => undefined); // reconnects on its own; errors surface on the main connection
    try {
      await sub.subscribe(this.channel);
    } catch (e) {
      await this.release(sub);
      throw e;
    }
    return () => this.release(sub);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((s) => this.release(s)));
  }

  private async release(sub: Redis | Cluster): Promise<void> {
    if (!this.open.delete(sub)) return;
    sub.removeAllListeners('message');
    try {
      await sub.quit();
    } catch {
      sub.disconnect();
    }
  }
}
