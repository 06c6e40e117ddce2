import { Inject, Injectable, Logger, type MessageEvent, type OnModuleDestroy } from '@nestjs/common';
import { Observable, type Subscriber } from 'rxjs';
import { DASHBOARD_OPTIONS, type ResolvedDashboardOptions } from './dashboard.options';
import { QueueSource } from './queue-source';

/** The connection of a stream (express and fastify requests both have it). */
export interface StreamSocket {
  end(): void;
}

/** What every open page is told each period: the counts for the header; pages re-read the rest. */
export interface LiveTick {
  at: number;
  queues: Array<{ name: string; byStatus: Record<string, number> }>;
}

/**
 * Server-sent events of the dashboard. ONE timer reads stats() of every queue each `refreshMs`
 * while at least one page listens and sends the same `tick` to every page; each page then
 * re-reads what it shows (unless its user paused the live updates). All streams end when the
 * module stops, so the app's shutdown never waits on an open page.
 */
@Injectable()
export class LiveUpdates implements OnModuleDestroy {
  private readonly logger = new Logger('PriorityQueueDashboard');
  /** Open streams and their connections. */
  private readonly listeners = new Map<Subscriber<MessageEvent>, StreamSocket | undefined>();
  private timer: NodeJS.Timeout | null = null;
  private last: MessageEvent | null = null;
  private reading = false;

  constructor(
    private readonly source: QueueSource,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  stream(socket?: StreamSocket): Observable<MessageEvent> {
    return new Observable<MessageEvent>((subscriber) => {
      this.listeners.set(subscriber, socket);
      if (this.last) subscriber.next(this.last);
      else void this.poll();
      this.timer ??= setInterval(() => void this.poll(), this.options.refreshMs);
      return () => {
        this.listeners.delete(subscriber);
        if (this.listeners.size === 0 && this.timer) {
          clearInterval(this.timer);
          this.timer = null;
          this.last = null;
        }
      };
    });
  }

  get listening(): number {
    return this.listeners.size;
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const open = [...this.listeners];
    this.listeners.clear();
    for (const [l] of open) l.complete();
    // the stream's response is ended; close its keep-alive connection too, so that the server's
    // close() does not wait for the client's idle timeout
    setImmediate(() => {
      for (const [, socket] of open) socket?.end();
    });
  }

  private async poll(): Promise<void> {
    if (this.reading) return; // a slow store: skip a period rather than pile reads up
    this.reading = true;
    try {
      const queues = await Promise.all(this.source.all().map(async (q) => ({ name: q.name, byStatus: (await q.stats()).byStatus })));
      const tick: LiveTick = { at: Date.now(), queues };
      const event: MessageEvent = { type: 'tick', data: JSON.stringify(tick), retry: this.options.refreshMs };
      if (this.listeners.size) this.last = event;
      for (const l of this.listeners.keys()) l.next(event);
    } catch (e) {
      this.logger.warn(`live update: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.reading = false;
    }
  }
}
