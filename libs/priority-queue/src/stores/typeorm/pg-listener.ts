import { Socket } from 'node:net';
import type { DataSource } from 'typeorm';
import { settledWithin } from '../../core/timers';

interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'notification', fn: (m: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', fn: (e?: unknown) => void): void;
  removeAllListeners(): void;
}

/** How long close() waits for the server to end the LISTEN connection before it drops the socket. */
const END_WAIT_MS = 1000;

/**
 * LISTEN on PostgreSQL: ONE dedicated connection (not taken from the DataSource pool) runs
 * LISTEN on one channel. Wake-ups: create() and setLimits() NOTIFY the queue's wake channel in
 * their transactions. Task events: pg-event-transport.ts NOTIFYs its own channel with a payload.
 * When the connection drops (server restart), it reconnects with back-off and calls every
 * listener once with `null`, since notifications sent meanwhile were lost.
 */
export class PgWakeListener {
  private client: PgClient | null = null;
  /** The client's socket: ours (node-pg's `stream` option), so close() can drop it when end() gets no answer. */
  private socket: Socket | null = null;
  private readonly listeners = new Set<(payload: string | null) => void>();
  private closed = false;
  private retryMs = 100;
  private timer: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly channel: string,
  ) {}

  async add(listener: (payload: string | null) => void): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    if (!this.client && !this.connecting) await this.connect().catch(() => this.scheduleReconnect());
    return async () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) await this.close();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const c = this.client;
    const socket = this.socket;
    this.client = null;
    this.socket = null;
    if (c) {
      c.removeAllListeners();
      c.on('error', () => undefined);
      // a server that does not answer (a partition) must not hold close(): drop the socket then
      if (!(await settledWithin(c.end().catch(() => undefined), END_WAIT_MS))) socket?.destroy();
    } else {
      socket?.destroy(); // a connect in progress (it may wait on a server that does not answer) fails at once
    }
  }

  private connect(): Promise<void> {
    this.connecting = (async () => {
      const driver = this.dataSource.driver as unknown as { postgres: { Client: new (o: object) => PgClient } };
      const o = this.dataSource.options as unknown as Record<string, unknown>;
      // node-pg connects the socket it is given (TLS, when ssl is set, is layered on it)
      const socket = new Socket();
      this.socket = socket;
      const client = new driver.postgres.Client({
        stream: socket,
        connectionString: o.url as string | undefined,
        host: o.host,
        port: o.port,
        user: o.username,
        password: o.password,
        database: o.database,
        ssl: o.ssl,
        application_name: 'priority-queue-listener',
      });
      client.on('error', () => this.lost(client));
      client.on('end', () => this.lost(client));
      client.on('notification', (m) => {
        if (m.channel === this.channel) this.wakeAll(m.payload ?? '');
      });
      await client.connect();
      await client.query(`LISTEN "${this.channel.replace(/"/g, '""')}"`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      const reconnected = this.retryMs > 100;
      this.client = client;
      this.retryMs = 100;
      if (reconnected) this.wakeAll(null);
    })().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private lost(client: PgClient): void {
    if (this.client !== client) return;
    this.client = null;
    client.removeAllListeners();
    client.on('error', () => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 5000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect().catch(() => this.scheduleReconnect());
    }, wait);
    this.timer.unref?.();
  }

  private wakeAll(payload: string | null): void {
    for (const l of this.listeners) {
      try {
        l(payload);
      } catch {
        /* a listener's error is its own */
      }
    }
  }
}
