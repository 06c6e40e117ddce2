import type { Response } from 'supertest';
import { startRedisServer, type RedisServerHandle } from '../support/servers/redis-server';
import { eventually, INITECH, startDemo } from './support/demo-harness';
import { demoSuite } from './support/demo-suite';

let redis: RedisServerHandle;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis?.stop();
});

demoSuite('redis', () => ({ kind: 'redis', url: redis.url }));

describe('demo app (e2e, redis store) through a Redis outage', () => {
  let server: RedisServerHandle;
  let ctx: Awaited<ReturnType<typeof startDemo>>;

  beforeAll(async () => {
    server = await startRedisServer({ appendOnly: true, appendFsync: 'always' });
    ctx = await startDemo({ kind: 'redis', url: server.url });
  });

  afterAll(async () => {
    await ctx?.demo.close();
    await server?.stop();
  });

  it('a request made while Redis is down waits for it (the recommended maxRetriesPerRequest: null) and is served after the restart', async () => {
    let during: Promise<Response> | undefined;
    await server.restart({
      downMs: 1500,
      whileDown: () => {
        during = ctx.http().post('/documents').set(INITECH).send({ name: 'during-outage.pdf' }).then((r) => r);
      },
    });
    const res = await during!;
    expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: expect.objectContaining({ status: 'PENDING_SUBMIT', tenantId: 'initech' }) });
    const done = await eventually(async () => {
      const t = (await ctx.http().get(`/tasks/${res.body.id}`).set(INITECH).expect(200)).body as { status: string };
      return ['SUCCEEDED', 'FAILED'].includes(t.status) ? t : undefined;
    }, 'the document submitted during the outage to finish');
    expect(done.status).toBe('SUCCEEDED');
  });
});
