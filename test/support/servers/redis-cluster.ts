import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { LOOPBACK, ensureBinary, freePort, spawnServer, stopProcess, tempDir, waitForPort } from './common';
import { redisServerBinary } from './redis-server';

/**
 * A throw-away Redis Cluster on loopback: `masters` x (1 + `replicasPerMaster`) redis-servers
 * with `cluster-enabled yes` on free ports (client and bus port each) in one temp dir, joined by
 * `redis-cli --cluster create ... --cluster-replicas N --cluster-yes`. Ready when every node
 * reports `cluster_state:ok` with all slots assigned and every replica's link to its master is
 * up. Nodes announce 127.0.0.1 and bind only loopback. No persistence.
 */
export interface ClusterNode {
  host: string;
  port: number;
}

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent master takes to be failed over (default 15,000 ms, Redis' own). */
  nodeTimeoutMs?: number;
}

export interface RedisClusterHandle {
  /** Every node started (the startup nodes of a client). */
  nodes: readonly ClusterNode[];
  /** The master serving `slot` now (CLUSTER SLOTS of a live node). */
  masterOf(slot: number): Promise<ClusterNode>;
  /** Current masters, in slot order. */
  masters(): Promise<ClusterNode[]>;
  /** CLUSTER KEYSLOT of `key`, asked of the server. */
  keySlot(key: string): Promise<number>;
  /** SIGKILLs one node (no shutdown, no goodbye to the cluster). */
  kill(node: ClusterNode): Promise<void>;
  /** Waits until every live node agrees the cluster is ok and `port`'s slots are served by a live master. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** An admin connection to one node (closed by stop()). */
  admin(node: ClusterNode): Redis;
  stop(): Promise<void>;
}

const key = (n: ClusterNode) => `${n.host}:${n.port}`;

/** `count` distinct free loopback ports. */
async function freePorts(count: number): Promise<number[]> {
  const out = new Set<number>();
  while (out.size < count) out.add(await freePort());
  return [...out];
}

function run(bin: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(bin, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) =>
      err ? reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

export async function startRedisCluster(opts: RedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const masters = opts.masters ?? 3;
  const replicas = opts.replicasPerMaster ?? 1;
  const total = masters * (1 + replicas);
  const bin = redisServerBinary();
  const cli = ensureBinary(['redis-cli', '/usr/bin/redis-cli'], 'redis-tools');
  const dir = tempDir('pq-redis-cluster-');
  const ports = await freePorts(total * 2);
  const nodes: ClusterNode[] = [];
  const procs = new Map<string, { child: ChildProcess; output: () => string }>();
  const admins = new Map<string, Redis>();

  const halt = async (): Promise<void> => {
    for (const a of admins.values()) a.disconnect();
    admins.clear();
    await Promise.all([...procs.values()].map((p) => stopProcess(p.child, 'SIGKILL', 5_000)));
    procs.clear();
  };

  const admin = (n: ClusterNode): Redis => {
    let c = admins.get(key(n));
    if (!c) {
      c = new Redis({ host: n.host, port: n.port, maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: false });
      c.on('error', () => undefined);
      admins.set(key(n), c);
    }
    return c;
  };
  const live = () => nodes.filter((n) => {
    const p = procs.get(key(n));
    return p && p.child.exitCode === null && p.child.signalCode === null;
  });

  const waitHealthy = async (timeoutMs = 60_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        const alive = live();
        const infos = await Promise.all(alive.map((n) => admin(n).call('CLUSTER', 'INFO') as Promise<string>));
        const field = (info: string, f: string) => new RegExp(`^${f}:(\\S+)`, 'm').exec(info)?.[1];
        const repl = await Promise.all(alive.map((n) => admin(n).info('replication')));
        const linksUp = repl.every((r) => !/^role:slave/m.test(r) || /^master_link_status:up/m.test(r));
        const mastersUp = repl.filter((r) => /^role:master/m.test(r)).length;
        last = infos.map((i) => `${field(i, 'cluster_state')}/${field(i, 'cluster_slots_ok')}`).join(' ') + ` links ${linksUp}`;
        const ok = infos.every((i) => field(i, 'cluster_state') === 'ok' && field(i, 'cluster_slots_ok') === '16384');
        const slotsLive = ok && (await servedByLive(alive));
        if (ok && linksUp && mastersUp >= masters && slotsLive) return;
      } catch (e) {
        last = String(e);
      }
      if (Date.now() > deadline) throw new Error(`Redis Cluster not healthy after ${timeoutMs} ms: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** Every node's slot map names only live masters. */
  const servedByLive = async (alive: ClusterNode[]): Promise<boolean> => {
    const liveKeys = new Set(alive.map(key));
    for (const n of alive) {
      const slots = (await admin(n).call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, ...unknown[]]]>;
      if (!slots.every(([, , m]) => liveKeys.has(`${m[0]}:${m[1]}`))) return false;
    }
    return true;
  };

  const slotMap = async (): Promise<Array<{ from: number; to: number; master: ClusterNode }>> => {
    const n = live()[0];
    const slots = (await admin(n).call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, ...unknown[]]]>;
    return slots
      .map(([from, to, m]) => ({ from: Number(from), to: Number(to), master: { host: String(m[0]), port: Number(m[1]) } }))
      .sort((a, b) => a.from - b.from);
  };

  try {
    for (let i = 0; i < total; i++) {
      const port = ports[2 * i];
      const busPort = ports[2 * i + 1];
      const nodeDir = join(dir.path, String(port));
      mkdirSync(nodeDir);
      const node = { host: LOOPBACK, port };
      nodes.push(node);
      procs.set(
        key(node),
        spawnServer(
          bin,
          [
            '--port', String(port),
            '--bind', LOOPBACK,
            '--dir', nodeDir,
            '--cluster-enabled', 'yes',
            '--cluster-port', String(busPort),
            '--cluster-config-file', 'nodes.conf',
            '--cluster-node-timeout', String(opts.nodeTimeoutMs ?? 15_000),
            '--cluster-announce-ip', LOOPBACK,
            '--repl-diskless-sync-delay', '0',
            '--save', '',
            '--appendonly', 'no',
            '--daemonize', 'no',
            '--protected-mode', 'no',
            '--loglevel', 'warning',
            '--logfile', '',
          ],
          { cwd: nodeDir },
        ),
      );
    }
    await Promise.all(nodes.map((n) => waitForPort(n.port, 20_000)));
    await run(cli, ['--cluster', 'create', ...nodes.map(key), '--cluster-replicas', String(replicas), '--cluster-yes'], 60_000);
    await waitHealthy();
  } catch (e) {
    const logs = [...procs.entries()].map(([k, p]) => `--- ${k}\n${p.output()}`).join('\n');
    await halt();
    dir.remove();
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${logs}`);
  }

  let stopped = false;
  return {
    nodes,
    admin,
    waitHealthy,
    async masters() {
      const seen = new Map<string, ClusterNode>();
      for (const r of await slotMap()) seen.set(key(r.master), r.master);
      return [...seen.values()];
    },
    async masterOf(slot) {
      const r = (await slotMap()).find((x) => x.from <= slot && slot <= x.to);
      if (!r) throw new Error(`slot ${slot} is not served`);
      return r.master;
    },
    async keySlot(k) {
      return Number(await admin(live()[0]).call('CLUSTER', 'KEYSLOT', k));
    },
    async kill(node) {
      const p = procs.get(key(node));
      if (!p) throw new Error(`no node ${key(node)}`);
      admins.get(key(node))?.disconnect();
      admins.delete(key(node));
      await stopProcess(p.child, 'SIGKILL');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await halt();
      dir.remove();
    },
  };
}
