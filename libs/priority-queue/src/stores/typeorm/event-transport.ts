import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { TaskEventTransport, TransitionMessage, TransportSubscriber } from '../../core/event-transport.port';
import { InProcessEventTransport } from '../../core/in-process-transport';
import { decodeTransitions, encodeTransitions } from '../../core/transition-codec';
import { notifyChannel } from './names';
import { PgWakeListener } from './pg-listener';

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes and more. */
const NOTIFY_MAX_BYTES = 7900;

/** The event transport of a TypeORM store: LISTEN/NOTIFY on PostgreSQL, in-process elsewhere. */
export function storeEventTransport(dataSource: DataSource, kind: string, prefix: string, queue: string): TaskEventTransport {
  if (kind !== 'postgres') return new InProcessEventTransport(dataSource, `${prefix}\u0000${queue}`);
  const h = createHash('sha1').update(`${prefix}\u0000${queue}`).digest();
  return new PgEventTransport(dataSource, notifyChannel(prefix, h, 'events'));
}

/**
 * Task transitions over PostgreSQL NOTIFY (a pool connection, outside any transaction: sent
 * after the write committed) and LISTEN (one dedicated connection per transport, shared by its
 * subscribers, see pg-listener.ts). NOTIFY keeps nothing for a listener that is not connected:
 * at most once.
 */
export class PgEventTransport implements TaskEventTransport {
  readonly reach = 'cluster' as const;
  private readonly subscribers = new Set<TransportSubscriber>();
  private unlisten: Promise<() => Promise<void>> | null = null;
  /** Messages waiting for the NOTIFY in flight to end, and the callers to answer when they went out. */
  private queued: Array<{ messages: readonly TransitionMessage[]; done: { resolve(): void; reject(e: unknown): void } }> = [];
  private sending = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly channel: string,
  ) {}

  /**
   * One NOTIFY at a time: each goes out on whichever pool connection is free, so two in flight
   * together could commit in either order, and a listener would see a task's 'succeeded' before
   * its 'submitting'. Publishes made while one is in flight go out together, in publish order, in
   * the next (as few NOTIFYs as their size allows): the order holds, and a burst costs one NOTIFY
   * per round trip instead of one per publish.
   */
  publish(messages: readonly TransitionMessage[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ messages, done: { resolve, reject } });
      if (!this.sending) void this.sendQueued();
    });
  }

  private async sendQueued(): Promise<void> {
    this.sending = true;
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0);
      try {
        for (const text of encodeTransitions(batch.flatMap((b) => b.messages), NOTIFY_MAX_BYTES)) {
          await this.dataSource.query('SELECT pg_notify($1, $2)', [this.channel, text]);
        }
        for (const b of batch) b.done.resolve();
      } catch (e) {
        for (const b of batch) b.done.reject(e);
      }
    }
    this.sending = false;
  }

  async subscribe(subscriber: TransportSubscriber): Promise<() => Promise<void>> {
    this.subscribers.add(subscriber);
    if (!this.unlisten) {
      this.unlisten = new PgWakeListener(this.dataSource, this.channel).add((payload) => this.deliver(payload));
    }
    await this.unlisten;
    return async () => {
      if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0) return;
      const unlisten = this.unlisten;
      this.unlisten = null;
      if (unlisten) await (await unlisten)();
    };
  }

  private deliver(payload: string | null): void {
    const messages = payload === null ? null : decodeTransitions(payload);
    for (const s of [...this.subscribers]) {
      try {
        if (messages === null) s.onGap?.();
        else if (messages.length > 0) s.onMessages(messages);
      } catch {
        /* a subscriber's error is its own */
      }
    }
  }
}
