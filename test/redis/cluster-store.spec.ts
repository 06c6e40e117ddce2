import { Cluster } from 'ioredis';
import { ManualClock, TaskStatus, ValidationError, fenceOf } from '../../libs/priority-queue/src/core';
import { RedisTaskStore } from '../../libs/priority-queue/src/redis';
import { luaScripts } from '../../libs/priority-queue/src/stores/redis/scripts';
import { startRedisCluster, type ClusterNode, type RedisClusterHandle } from '../support/servers/redis-cluster';
import { assertPlacement, placeQueue, type QueuePlacement } from './support/cluster-placement';
import { noopTask } from './support/fixtures';

/**
 * What a Redis Cluster asks of the store beyond the contract suite (which runs on a cluster in
 * test/contract/redis-cluster.contract.spec.ts): scripts on every master, the clock of the
 * queue's own master, wake-ups through a duplicate() of a Cluster client for queues on every
 * master (classic pub/sub, broadcast over the cluster bus).
 */
describe('RedisTaskStore on a Redis Cluster', () => {
  let cluster: RedisClusterHandle;
  let client: Cluster;
  let masters: ClusterNode[];
  /** One queue per master. */
  let placed: QueuePlacement[];
  const opened: RedisTaskStore[] = [];
  let n = 0;
  const open = async (p: QueuePlacement, opts: { clock?: ManualClock } = {}) => {
    const s = new RedisTaskStore({ connection: client, prefix: p.prefix, queue: p.queue, ...opts });
    opened.push(s);
    await s.init();
    return s;
  };
  const commandCalls = async (node: ClusterNode, command: string): Promise<number> => {
    const info = await cluster.admin(node).info('commandstats');
    return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster([...cluster.nodes], { redisOptions: { maxRetriesPerRequest: 3 } });
    masters = await cluster.masters();
    placed = [];
    for (const m of masters) placed.push(await placeQueue(cluster, `cs${++n}`, 'q', m));
    for (const p of placed) await assertPlacement(cluster, p);
  }, 120_000);
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('places one queue on each of the 3 masters', () => {
    expect(masters).toHaveLength(3);
    expect(new Set(placed.map((p) => p.master.port)).size).toBe(3);
  });

  it('init() loads every script on every master', async () => {
    for (const m of masters) await cluster.admin(m).call('SCRIPT', 'FLUSH');
    // through a client created just now (it learns the masters while the store's init runs)
    const fresh = new Cluster([cluster.nodes[5]], { redisOptions: { maxRetriesPerRequest: 3 } });
    const store = new RedisTaskStore({ connection: fresh, prefix: placed[0].prefix, queue: placed[0].queue });
    await store.init();
    await store.close();
    fresh.disconnect();
    const shas = Object.values(luaScripts()).map((s) => s.sha);
    for (const m of masters) {
      expect(await cluster.admin(m).call('SCRIPT', 'EXISTS', ...shas)).toEqual(shas.map(() => 1));
    }
  });

  it("now() reads the TIME of the queue's own master (the clock its scripts use)", async () => {
    for (const p of placed) {
      const store = await open(p);
      await Promise.all(masters.map((m) => cluster.admin(m).call('CONFIG', 'RESETSTAT')));
      for (let i = 0; i < 12; i++) await store.now();
      const calls = await Promise.all(masters.map((m) => commandCalls(m, 'time')));
      expect(calls).toEqual(masters.map((m) => (m.port === p.master.port ? 12 : 0)));
    }
  });

  it('subscribe() wakes for a queue on every master; a queue never hears another queue', async () => {
    const clock = new ManualClock();
    const stores = await Promise.all(placed.map((p) => open(p, { clock })));
    const wakes = stores.map(() => 0);
    const unsubs = await Promise.all(stores.map((s, i) => s.subscribe(() => wakes[i]++)));
    const waitFor = async (cond: () => boolean) => {
      for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(cond()).toBe(true);
    };
    for (const [i, store] of stores.entries()) {
      const before = [...wakes];
      await store.create([noopTask({ concurrencyKey: 'k' }), noopTask({ concurrencyKey: 'k' })]);
      await waitFor(() => wakes[i] > before[i]);
      const [held] = (await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 1000 })).claimed;
      const mid = wakes[i];
      await store.complete(fenceOf(held), { status: TaskStatus.SUCCEEDED }); // frees k: a wake
      await waitFor(() => wakes[i] > mid);
      // the other queues heard nothing of this one
      expect(wakes.filter((_, j) => j !== i)).toEqual(before.filter((_, j) => j !== i));
    }
    await Promise.all(unsubs.map((u) => u()));
  });

  it('waitForReplicas: every write is followed by a WAIT on the queue\'s master (reads are not); bad values are refused', async () => {
    const p = placed[1];
    const store = new RedisTaskStore({ connection: client, prefix: p.prefix, queue: p.queue, waitForReplicas: { replicas: 1, timeoutMs: 5000 } });
    opened.push(store);
    await store.init();
    await Promise.all(masters.map((m) => cluster.admin(m).call('CONFIG', 'RESETSTAT')));
    await store.create([noopTask({}), noopTask({})]); // 1 write
    const { claimed } = await store.claimSubmissions({ owner: 'w', limit: 2, leaseMs: 10_000 }); // 1
    await Promise.all(claimed.map((t) => store.complete(fenceOf(t), { status: TaskStatus.SUCCEEDED }))); // 1 (one batch)
    await store.setLimits({ kind: 'tenant', tenantId: 't', quota: 3 }); // 1 (+ a read: get_limits)
    await store.stats(); // read
    await store.list({ status: TaskStatus.SUCCEEDED, limit: 10 }); // read
    await store.get(claimed[0].id); // read
    await store.now(); // read
    const waits = await Promise.all(masters.map((m) => commandCalls(m, 'wait')));
    expect(waits).toEqual(masters.map((m) => (m.port === p.master.port ? 4 : 0)));
    // the replica acknowledged everything: it holds the finished tasks
    const [replica] = await cluster.replicasOf(p.master);
    await cluster.admin(replica).call('READONLY');
    expect(await cluster.admin(replica).hget(store.keys.task(claimed[1].id), 'status')).toBe(TaskStatus.SUCCEEDED);

    for (const bad of [{ replicas: 0, timeoutMs: 100 }, { replicas: 1, timeoutMs: 0 }, { replicas: 1.5, timeoutMs: 100 }, { replicas: 1, timeoutMs: NaN }]) {
      expect(() => new RedisTaskStore({ connection: client, waitForReplicas: bad })).toThrow(ValidationError);
    }
  });

  // changes the topology: last
  it('waitForReplicas: a store keeps working across a manual failover (the script redirected inside its WAIT pipeline is re-sent)', async () => {
    const p = await placeQueue(cluster, 'failover', 'q', masters[2]);
    const waiting = new RedisTaskStore({ connection: client, prefix: p.prefix, queue: p.queue, waitForReplicas: { replicas: 1, timeoutMs: 5000 } });
    const plain = new RedisTaskStore({ connection: client, prefix: p.prefix, queue: p.queue });
    opened.push(waiting, plain);
    await waiting.init();
    await plain.init();
    const before = await waiting.create([noopTask({}), noopTask({})]);
    const [replica] = await cluster.replicasOf(p.master);
    await cluster.admin(replica).call('CLUSTER', 'FAILOVER'); // coordinated: no write lost
    for (let i = 0; i < 300 && (await cluster.masterOf(p.slot)).port !== replica.port; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await cluster.masterOf(p.slot)).port).toBe(replica.port);
    await cluster.waitHealthy();
    // the client still routes the queue's slot to the old master (now a replica): MOVED
    const after = await waiting.create([noopTask({})]);
    const viaPlain = await plain.create([noopTask({})]);
    const claimed = (await waiting.claimSubmissions({ owner: 'w', limit: 10, leaseMs: 10_000 })).claimed;
    expect(claimed.map((t) => t.id).sort()).toEqual([...before, ...after, ...viaPlain].map((r) => r.task.id).sort());
  });

  // kills a master: last
  it('waitForReplicas: a write whose WAIT never answered (its master died while cut off from its replica) is not reported done', async () => {
    const p = await placeQueue(cluster, 'cutoff', 'q', (await cluster.masters())[0]);
    const store = new RedisTaskStore({ connection: client, prefix: p.prefix, queue: p.queue, waitForReplicas: { replicas: 1, timeoutMs: 60_000 } });
    opened.push(store);
    await store.init();
    const [replica] = await cluster.replicasOf(p.master);
    // the replica is cut off (link killed, process frozen): the master runs the write, WAIT waits
    await cluster.admin(p.master).call('CLIENT', 'KILL', 'TYPE', 'replica');
    cluster.signal(replica, 'SIGSTOP');
    try {
      const task = noopTask({});
      const outcome = store.create([task]).then(
        () => 'reported done',
        () => 'failed',
      );
      for (let i = 0; i < 500 && !(await cluster.admin(p.master).exists(store.keys.task(task.id))); i++) await new Promise((r) => setTimeout(r, 10));
      expect(await cluster.admin(p.master).exists(store.keys.task(task.id))).toBe(1);
      await cluster.kill(p.master); // the write dies with it: the replica never had it
      expect(await outcome).toBe('failed');
    } finally {
      cluster.signal(replica, 'SIGCONT');
    }
  });
});
