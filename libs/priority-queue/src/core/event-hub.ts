import type { TaskEvent, TaskEvents } from './events';
import type { TaskEventTransport, TransitionMessage, TransportSubscriber } from './event-transport.port';

export interface QueueEventHubOptions {
  events: TaskEvents;
  transport: TaskEventTransport;
  /** Publish the transitions this process makes (default true). */
  publish?: boolean;
  onError?: (error: unknown) => void;
}

/**
 * The cross-process side of one queue's events: publishes the transitions this process makes
 * (gathered per event-loop turn, one transport message per turn), and fans the transport's
 * messages out to local subscribers (cluster @OnTaskEvent handlers, waitFor) through ONE
 * transport subscription, opened by the first subscriber and kept until stop().
 */
export class QueueEventHub {
  private readonly events: TaskEvents;
  readonly transport: TaskEventTransport;
  private readonly publishing: boolean;
  private readonly onError: (error: unknown) => void;
  private pending: TransitionMessage[] = [];
  private flushScheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  private off: (() => void) | null = null;
  private subscription: Promise<() => Promise<void>> | null = null;
  private readonly subscribers = new Set<TransportSubscriber>();
  private stopped = false;

  constructor(options: QueueEventHubOptions) {
    this.events = options.events;
    this.transport = options.transport;
    this.publishing = options.publish ?? true;
    this.onError = options.onError ?? (() => undefined);
  }

  start(): void {
    if (!this.publishing || this.off || this.stopped) return;
    this.off = this.events.on((e) => this.add(e));
  }

  /** Receives every message of the queue's transport (this process's own transitions included). */
  async subscribe(subscriber: TransportSubscriber): Promise<() => void> {
    if (this.stopped) return () => undefined;
    this.subscribers.add(subscriber);
    try {
      await (this.subscription ??= this.transport.subscribe({
        onMessages: (m) => this.each((s) => s.onMessages(m)),
        onGap: () => this.each((s) => s.onGap?.()),
      }));
    } catch (e) {
      this.subscribers.delete(subscriber);
      this.subscription = null;
      throw e;
    }
    return () => void this.subscribers.delete(subscriber);
  }

  /** Publishes what is pending, then closes the transport subscription. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.off?.();
    this.off = null;
    this.flush();
    await Promise.all([...this.inFlight]);
    this.subscribers.clear();
    const sub = this.subscription;
    this.subscription = null;
    if (sub) await sub.then((unsubscribe) => unsubscribe()).catch((e) => this.onError(e));
  }

  private add(e: TaskEvent): void {
    const m: TransitionMessage = { taskId: e.taskId, type: e.type, from: e.from, to: e.to, at: e.at, error: e.task.error ?? null };
    if (e.boostedFrom !== undefined) m.boostedFrom = e.boostedFrom;
    this.pending.push(m);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const p = this.transport.publish(batch).catch((e) => this.onError(e));
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private each(fn: (s: TransportSubscriber) => void): void {
    for (const s of [...this.subscribers]) {
      try {
        fn(s);
      } catch (e) {
        this.onError(e);
      }
    }
  }
}
