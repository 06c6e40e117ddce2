import { createServer, connect, type Server, type Socket } from 'node:net';
import { LOOPBACK } from './servers/common';

/** A chunk the client sent on one connection, as the proxy forwards it. */
export type ChunkMatch = (chunk: Buffer) => boolean;

/**
 * A TCP proxy on loopback in front of a real server (Redis, PostgreSQL, MariaDB), for fault
 * injection: `dropAfter(steps)` arms ONE lost reply. On the first connection whose client sends
 * chunks matching every step in order (e.g. [renewal] or [renewal, COMMIT]), the proxy forwards
 * the last matching chunk to the server, then closes the client's socket at once (the client
 * never sees the reply) and half-closes the server's side, so the server still runs what it was
 * sent (a server reads a command before it notices the end of the stream). The promise
 * resolves once the server closed that connection, i.e. after it ran the command; new client
 * connections wait until then, so a command the client re-sends on a new connection reaches
 * the server after the original one (the lost-reply order, deterministic).
 */
export class TcpProxy {
  readonly host = LOOPBACK;
  port = 0;
  /** Connections accepted so far. */
  connections = 0;
  private server: Server | null = null;
  private readonly open = new Set<Socket>();
  private armed: { steps: ChunkMatch[]; dropped: () => void } | null = null;
  /** While a dropped connection is still open on the server side, new connections wait for it. */
  private gate: Promise<void> = Promise.resolve();
  /** Client / upstream pairs being forwarded (a partition pauses them). */
  private readonly pairs = new Set<[Socket, Socket]>();
  private healed: (() => void) | null = null;
  /** The server is "down" (down()): connections are closed as they come. */
  private refusing = false;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    const server = createServer((client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, LOOPBACK, () => resolve());
    });
    proxy.server = server;
    proxy.port = (server.address() as { port: number }).port;
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const u = new URL(url);
    u.hostname = this.host;
    u.port = String(this.port);
    return u.toString();
  }

  /** Arms one lost reply (see the class comment); resolves when the server ran the command and closed. */
  dropAfter(steps: ChunkMatch[]): Promise<void> {
    if (this.armed) throw new Error('a drop is already armed');
    return new Promise<void>((resolve) => (this.armed = { steps, dropped: resolve }));
  }

  /**
   * A network partition: every open connection stops moving bytes both ways (nothing is lost or
   * closed: the sockets are paused, the bytes wait in the kernel's buffers), and new connections
   * wait; requests hang, as they do when a route goes down. heal() lets everything through again.
   */
  partition(): void {
    if (this.healed) return;
    for (const [client, upstream] of this.pairs) {
      client.pause();
      upstream.pause();
    }
    const gate = this.gate;
    this.gate = new Promise<void>((r) => (this.healed = r)).then(() => gate);
  }

  heal(): void {
    if (!this.healed) return;
    for (const [client, upstream] of this.pairs) {
      client.resume();
      upstream.resume();
    }
    this.healed();
    this.healed = null;
  }

  /**
   * The server goes down, as in a restart: every open connection is closed at once (a request in
   * flight fails, its reply never comes) and each new one is closed as soon as it is accepted,
   * until up(). Unlike partition(), requests fail fast rather than hang.
   */
  down(): void {
    this.refusing = true;
    for (const s of this.open) s.destroy();
  }

  up(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    this.heal();
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Socket): void {
    this.connections++;
    this.track(client);
    if (this.refusing) {
      client.destroy();
      return;
    }
    client.pause(); // its first bytes wait for the upstream connection
    const gate = this.gate;
    void gate.then(() => {
      if (client.destroyed) return;
      const upstream = connect(this.targetPort, this.targetHost);
      this.track(upstream);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      client.once('close', () => this.pairs.delete(pair));
      let step = 0;
      let dropping = false;
      upstream.on('data', (d) => {
        if (!dropping) client.write(d);
      });
      upstream.on('close', () => client.destroy());
      client.on('close', () => {
        if (!dropping) upstream.destroy();
      });
      client.on('data', (chunk: Buffer) => {
        if (dropping) return;
        const armed = this.armed;
        if (armed && armed.steps[step](chunk) && ++step === armed.steps.length) {
          this.armed = null;
          dropping = true;
          let reopen!: () => void;
          this.gate = new Promise<void>((r) => (reopen = r));
          upstream.once('close', () => {
            reopen();
            armed.dropped();
          });
          upstream.end(chunk); // the last command, then end of stream: the server runs it, then closes
          client.destroy(); // the reply is lost
          return;
        }
        upstream.write(chunk);
      });
      client.resume();
    });
  }

  private track(s: Socket): void {
    this.open.add(s);
    s.on('error', () => undefined); // a reset while tearing down is expected
    s.on('close', () => this.open.delete(s));
  }
}
