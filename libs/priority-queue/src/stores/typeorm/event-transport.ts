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
  /** The last publish: each NOTIFY waits for the one before (see publish). */
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataSource: DataSource,
    private readonly channel: string,
  ) {}

  /**
   * One publish at a time: each NOTIFY goes out on whichever pool connection is free, so two
   * publishes in flight together could commit in either order, and a listener would see a task's
   * 'succeeded' before its 'submitting'. Chained, they reach listeners in the order this process
   * made them.
   */
  publish(messages: readonly TransitionMessage[]): Promise<void> {
    const run = this.tail.then(() => this.send(messages));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async send(messages: readonly TransitionMessage[]): Promise<void> {
    for (const text of encodeTransitions(messages, NOTIFY_MAX_BYTES)) {
      await this.dataSource.query('SELECT pg_notify($1, $2)', [this.channel, text]);
    }
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
