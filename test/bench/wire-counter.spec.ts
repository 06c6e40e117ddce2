import IORedis from 'ioredis';
import { Client } from 'pg';
import { startPostgresServer, type SqlServerHandle } from '../support/servers/postgres-server';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { PgCounter, RespCounter, startWireCounter } from './lib/wire-counter';

/** The idle scenario's request counter (test/bench/lib/wire-counter.ts), on real clients and servers. */

const resp = (...args: string[]) => `*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('');

function pgMessage(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function pgStartup(code: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(code, 4);
  return Buffer.concat([head, body]);
}

/** Feeds a stream one byte at a time: every state must survive a chunk boundary anywhere. */
function feedBytewise(counter: { feed(b: Buffer): void }, stream: Buffer): void {
  for (let i = 0; i < stream.length; i++) counter.feed(stream.subarray(i, i + 1));
}

describe('wire counter: parsers', () => {
  it('counts RESP commands whatever their arguments hold, across any chunk boundary', () => {
    // arguments that look like RESP headers must be skipped as data
    const stream = Buffer.from(
      resp('SET', 'k', '*3\r\n$3\r\nGET\r\n') +
        resp('EVALSHA', 'a'.repeat(40), '0') +
        'PING\r\n' +
        resp('GET', 'k') +
        resp('HSET', 'h', 'f', 'x'.repeat(70_000)),
    );
    for (const feed of [(c: RespCounter) => c.feed(stream), (c: RespCounter) => feedBytewise(c, stream)]) {
      const tally = { total: 0, commands: new Map<string, number>() };
      feed(new RespCounter(tally));
      expect(tally.total).toBe(5);
      expect(Object.fromEntries(tally.commands)).toEqual({ SET: 1, EVALSHA: 1, PING: 1, GET: 1, HSET: 1 });
    }
  });

  it('counts PostgreSQL round trips: simple queries and syncs, not startup, parse, bind or terminate', () => {
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0', 'latin1');
    const stream = Buffer.concat([
      pgStartup(80877103), // SSLRequest (answered 'N', then the real startup)
      pgStartup(196608, params),
      pgMessage('p', Buffer.from('secret\0', 'latin1')),
      pgMessage('Q', Buffer.from('SELECT 1\0', 'latin1')),
      pgMessage('P', Buffer.from('\0SELECT $1::int\0\0\0', 'latin1')),
      pgMessage('B', Buffer.alloc(12)),
      pgMessage('D', Buffer.from('P\0', 'latin1')),
      pgMessage('E', Buffer.alloc(5)),
      pgMessage('S'),
      pgMessage('Q', Buffer.from('SELECT pg_sleep(0) -- Q S Q S\0', 'latin1')),
      pgMessage('X'),
    ]);
    for (const bytewise of [false, true]) {
      const tally = { total: 0, commands: new Map<string, number>() };
      const counter = new PgCounter(tally);
      if (bytewise) feedBytewise(counter, stream);
      else counter.feed(stream);
      expect(tally.total).toBe(3);
    }
  });
});

describe('wire counter: relay to real servers', () => {
  let redis: RedisServerHandle;
  let postgres: SqlServerHandle;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), postgres?.stop()]);
  });

  it('Redis: a script call is one round trip while the server runs each command inside it', async () => {
    const relay = await startWireCounter('redis', { host: redis.host, port: redis.port });
    const direct = new IORedis(redis.url);
    const client = new IORedis(relay.port, relay.host);
    try {
      await client.ping();
      const commandsRun = async () => {
        const info = await direct.info('commandstats');
        return [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].filter((m) => m[1] !== 'info').reduce((a, m) => a + Number(m[2]), 0);
      };
      const requests0 = relay.requests();
      const run0 = await commandsRun();
      await client.set('k', 'v');
      await client.pipeline().get('k').get('k').get('k').exec();
      await client.eval("for i = 1, 5 do redis.call('incr', KEYS[1]) end return 1", 1, 'n');
      expect(relay.requests() - requests0).toBe(5);
      expect((await commandsRun()) - run0).toBe(10); // set, 3 get, eval and its 5 incr
      expect(relay.byCommand().get('GET')).toBe(3);
      // bytes sent: exactly the RESP encoding of what the client sent, replies not counted
      const bytes0 = relay.bytesSent();
      await client.set('k', 'x'.repeat(1000));
      await client.get('k');
      expect(relay.bytesSent() - bytes0).toBe(Buffer.byteLength(resp('set', 'k', 'x'.repeat(1000)) + resp('get', 'k')));
    } finally {
      client.disconnect();
      direct.disconnect();
      await relay.close(0);
    }
  });

  it('PostgreSQL: one per simple query, parameterised statement and transaction statement', async () => {
    const relay = await startWireCounter('postgres', { host: postgres.host, port: postgres.port });
    const client = new Client({ host: relay.host, port: relay.port, user: postgres.user, password: postgres.password, database: postgres.database });
    await client.connect(); // startup and SCRAM authentication: not counted
    try {
      expect(relay.requests()).toBe(0);
      await client.query('SELECT 1');
      await client.query('SELECT $1::int AS n', [7]);
      await client.query('BEGIN');
      await client.query({ name: 'prepared', text: 'SELECT $1::text AS t', values: ['a'] });
      await client.query({ name: 'prepared', text: 'SELECT $1::text AS t', values: ['b'] });
      await client.query('COMMIT');
      expect(relay.requests()).toBe(6);
    } finally {
      await client.end();
      await relay.close(0);
    }
  });
});
