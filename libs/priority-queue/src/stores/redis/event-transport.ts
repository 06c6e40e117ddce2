import type { TaskEventTransport, TransitionMessage, TransportSubscriber } from '../../core/event-transport.port';
import { decodeTransitions, encodeTransitions } from '../../core/transition-codec';
import type { RedisConnection } from './connection-check';
import { quitWithin } from './quit';

/**
 * Task transitions between processes over Redis pub/sub (model: BullMQ's QueueEvents, which
 * reads a stream; pub/sub keeps nothing, hence at most once). Publishing uses the store's
 * connection; the subscribers of one transport share one `duplicate()` connection, opened with
 * the first and closed with the last. After a reconnect, subscribers are told of the gap.
 */
export class RedisEventTransport implements TaskEventTransport {
  readonly reach = 'cluster' as const;
  private readonly subscribers = new Set<TransportSubscriber>();
  private sub: RedisConnection | null = null;
  private opening: Promise<RedisConnection> | null = null;

  constructor(
    private readonly connection: RedisConnection,
    private readonly channel: string,
  ) {}

  async publish(messages: readonly TransitionMessage[]): Promise<void> {
    for (const text of encodeTransitions(messages)) await this.connection.publish(this.channel, text);
  }

  async subscribe(subscriber: TransportSubscriber): Promise<() => Promise<void>> {
    this.subscribers.add(subscriber);
    try {
      await (this.opening ??= this.open());
    } catch (e) {
      this.subscribers.delete(subscriber);
      throw e;
    }
    return async () => {
      if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0) return;
      const sub = this.sub;
      this.sub = null;
      this.opening = null;
      if (sub) await quit(sub);
    };
  }

  private async open(): Promise<RedisConnection> {
    const sub = this.connection.duplicate();
    let readyBefore = false;
    sub.on('ready', () => {
      if (readyBefore) this.each((s) => s.onGap?.());
      readyBefore = true;
    });
    sub.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const messages = decodeTransitions(text);
      if (messages.length > 0) this.each((s) => s.onMessages(messages));
    });
    sub.on('error', () => undefined); // reconnects on its own; errors surface on the main connection
    try {
      await sub.subscribe(this.channel);
    } catch (e) {
      this.opening = null;
      await quit(sub);
      throw e;
    }
    this.sub = sub;
    return sub;
  }

  private each(fn: (s: TransportSubscriber) => void): void {
    for (const s of [...this.subscribers]) {
      try {
        fn(s);
      } catch {
        /* a subscriber's error is its own */
      }
    }
  }
}

async function quit(c: RedisConnection): Promise<void> {
  c.removeAllListeners('message');
  await quitWithin(c);
}
