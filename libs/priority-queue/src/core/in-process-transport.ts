import type { TaskEventTransport, TransitionMessage, TransportSubscriber } from './event-transport.port';

/** Subscribers per backing object (a memory store, a DataSource) and channel name. */
const hubs = new WeakMap<object, Map<string, Set<TransportSubscriber>>>();

/**
 * A TaskEventTransport within one process: every store instance built on the same backing object
 * (`owner`: a memory store, a TypeORM DataSource) with the same `channel` shares the subscribers.
 * Used by the memory store, SQLite and MySQL/MariaDB, which have no cross-process notification.
 */
export class InProcessEventTransport implements TaskEventTransport {
  readonly reach = 'process' as const;
  private readonly subscribers: Set<TransportSubscriber>;

  constructor(owner: object, channel: string) {
    let byChannel = hubs.get(owner);
    if (!byChannel) hubs.set(owner, (byChannel = new Map()));
    let subs = byChannel.get(channel);
    if (!subs) byChannel.set(channel, (subs = new Set()));
    this.subscribers = subs;
  }

  async publish(messages: readonly TransitionMessage[]): Promise<void> {
    if (messages.length === 0 || this.subscribers.size === 0) return;
    const subs = [...this.subscribers];
    // delivered on a later turn, as a network transport would: a publisher never runs subscriber code inline
    setImmediate(() => {
      for (const s of subs) {
        if (!this.subscribers.has(s)) continue; // unsubscribed meanwhile
        try {
          s.onMessages(messages);
        } catch {
          /* a subscriber's error is its own */
        }
      }
    });
  }

  async subscribe(subscriber: TransportSubscriber): Promise<() => Promise<void>> {
    const entry: TransportSubscriber = { onMessages: (m) => subscriber.onMessages(m), onGap: subscriber.onGap?.bind(subscriber) };
    this.subscribers.add(entry);
    return async () => {
      this.subscribers.delete(entry);
    };
  }
}
