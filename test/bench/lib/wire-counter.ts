/**
 * A loopback TCP relay that counts the requests clients send to a server, for the idle scenario:
 * its idle workers connect through it, so the count is the store round trips they make, whatever
 * the server then does (a Lua script call counts once; Redis' INFO commandstats would also count
 * every command the script runs, and PostgreSQL needs an extension preloaded at start for a
 * statement count). No MONITOR, no server setting, the same measure for ours and the peers.
 *
 * - Redis: one request per RESP command (an array of bulk strings, as every client library
 *   sends them; an inline command counts too); pipelined commands count one each.
 * - PostgreSQL: one request per simple Query ('Q') or extended-protocol Sync ('S'): a
 *   parameterised statement (Parse, Bind, Describe, Execute, Sync) is one round trip. The
 *   startup packet and authentication are not counted. Clients that ask for TLS are not
 *   supported (none here does).
 *
 * The relay adds one loopback hop (in this process) to those connections only.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export type WireProtocol = 'redis' | 'postgres';

export interface WireCounter {
  host: string;
  port: number;
  /** Requests counted since start. */
  requests(): number;
  /** Redis only: requests per command name since start. */
  byCommand(): Map<string, number>;
  /** Bytes the clients sent to the server since start (requests, not replies). */
  bytesSent(): number;
  /**
   * Stops accepting connections, lets the clients close theirs (a pool that ends after its
   * owner's stop() resolved must not see its connections cut under a query), and cuts what is
   * still open after `graceMs`.
   */
  close(graceMs?: number): Promise<void>;
}

interface Tally {
  total: number;
  commands: Map<string, number>;
  bytes?: number;
}

const CR = 0x0d;
const LF = 0x0a;

/** Counts RESP commands in a client-to-server byte stream, across chunk boundaries. */
export class RespCounter {
  private state: 'start' | 'arrayLen' | 'bulkHeader' | 'bulkLen' | 'bulkBody' | 'inline' = 'start';
  private num = 0;
  private bulks = 0;
  private skip = 0;
  private first = false;
  private name = '';

  constructor(private readonly tally: Tally) {}

  feed(buf: Buffer): void {
    let i = 0;
    while (i < buf.length) {
      const c = buf[i];
      switch (this.state) {
        case 'start':
          i++;
          if (c === 0x2a /* * */) {
            this.state = 'arrayLen';
            this.num = 0;
          } else if (c !== CR && c !== LF) {
            this.name = String.fromCharCode(c);
            this.state = 'inline';
          }
          break;
        case 'arrayLen':
        case 'bulkLen':
          i++;
          if (c >= 0x30 && c <= 0x39) this.num = this.num * 10 + (c - 0x30);
          else if (c === LF) this.endNumber();
          break;
        case 'bulkHeader':
          i++;
          if (c === 0x24 /* $ */) {
            this.state = 'bulkLen';
            this.num = 0;
          }
          break;
        case 'bulkBody': {
          const n = Math.min(this.skip, buf.length - i);
          if (this.first && this.name.length < 24) this.name += buf.toString('latin1', i, i + Math.min(n, 24 - this.name.length));
          i += n;
          this.skip -= n;
          if (this.skip === 0) {
            if (this.first) this.count(this.name.replace(/\r?\n?$/, ''));
            this.first = false;
            this.bulks--;
            this.state = this.bulks > 0 ? 'bulkHeader' : 'start';
          }
          break;
        }
        case 'inline':
          i++;
          if (c === LF) {
            this.count(this.name.split(' ')[0].trim());
            this.state = 'start';
          } else if (this.name.length < 24) this.name += String.fromCharCode(c);
          break;
      }
    }
  }

  private endNumber(): void {
    if (this.state === 'arrayLen') {
      this.bulks = this.num;
      this.first = true;
      this.name = '';
      this.state = this.bulks > 0 ? 'bulkHeader' : 'start';
    } else {
      this.skip = this.num + 2; // the bytes and their CRLF
      this.state = 'bulkBody';
    }
  }

  private count(name: string): void {
    const key = name.toUpperCase();
    this.tally.total++;
    this.tally.commands.set(key, (this.tally.commands.get(key) ?? 0) + 1);
  }
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Counts PostgreSQL round trips (Query and Sync messages) in a client-to-server byte stream. */
export class PgCounter {
  private startup = true;
  private readonly header = Buffer.alloc(8);
  private got = 0;
  private skip = 0;

  constructor(private readonly tally: Tally) {}

  feed(buf: Buffer): void {
    let i = 0;
    while (i < buf.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, buf.length - i);
        i += n;
        this.skip -= n;
        continue;
      }
      // startup-phase packets: length (4) + protocol code (4); then type (1) + length (4)
      const need = this.startup ? 8 : 5;
      const n = Math.min(need - this.got, buf.length - i);
      buf.copy(this.header, this.got, i, i + n);
      this.got += n;
      i += n;
      if (this.got < need) continue;
      this.got = 0;
      if (this.startup) {
        const code = this.header.readInt32BE(4);
        this.skip = this.header.readInt32BE(0) - 8;
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.startup = false;
      } else {
        const type = this.header[0];
        this.skip = this.header.readInt32BE(1) - 4;
        if (type === 0x51 /* Q */ || type === 0x53 /* S */) this.tally.total++;
      }
    }
  }
}

export async function startWireCounter(protocol: WireProtocol, upstream: { host: string; port: number }): Promise<WireCounter> {
  const tally: Tally = { total: 0, commands: new Map(), bytes: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const counter = protocol === 'redis' ? new RespCounter(tally) : new PgCounter(tally);
    const up = connect(upstream.port, upstream.host);
    client.setNoDelay(true);
    up.setNoDelay(true);
    sockets.add(client);
    sockets.add(up);
    const closeBoth = () => {
      client.destroy();
      up.destroy();
      sockets.delete(client);
      sockets.delete(up);
    };
    client.on('data', (chunk: Buffer) => {
      tally.bytes = (tally.bytes ?? 0) + chunk.length;
      counter.feed(chunk);
    });
    client.pipe(up);
    up.pipe(client);
    for (const s of [client, up]) {
      s.on('error', closeBoth);
      s.on('close', closeBoth);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('wire counter: no port');
  return {
    host: '127.0.0.1',
    port: address.port,
    requests: () => tally.total,
    byCommand: () => new Map(tally.commands),
    bytesSent: () => tally.bytes ?? 0,
    async close(graceMs = 3_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const deadline = Date.now() + graceMs;
      while (sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
