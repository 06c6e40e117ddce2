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
  /** The replicas of a master (CLUSTER SLOTS). */
  replicasOf(master: ClusterNode): Promise<ClusterNode[]>;
  /** SIGKILLs one node (no shutdown, no goodbye to the cluster). */
  kill(node: ClusterNode): Promise<void>;
  /** Sends a signal to one node's process (SIGSTOP / SIGCONT: a frozen node). */
  signal(node: ClusterNode, signal: NodeJS.Signals): void;
  /** Starts a killed node again with its config (it rejoins, as a replica if it was failed over). */
  restart(node: ClusterNode): Promise<void>;
  /**
   * Waits until every live node reports cluster_state:ok with all slots, every slot map names
   * only live masters, at least `masters` masters serve, and every replica's link is up.
   */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** The last output of every node (for error messages). */
  logs(): string;
  /** An admin connection to one node (closed by stop()). */
  admin(node: ClusterNode): Redis;
  stop(): Promise<void>;
}

const key = (n: ClusterNode) => `${n.host}:${n.port}`;

/**
 * cluster-node-timeout while the cluster forms: a node pings every other node at least every
 * half timeout, so roles spread in about a second instead of 7 s at Redis' default.
 */
const JOIN_NODE_TIMEOUT_MS = 1000;

/** One line of CLUSTER NODES. */
interface NodeView {
  id: string;
  /** host:port */
  addr: string;
  myself: boolean;
  role: 'master' | 'slave';
  /** Master id of a replica ('-' for a master). */
  master: string;
  /** Flagged fail or pfail. */
  failing: boolean;
}

function parseNodes(text: string): NodeView[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, addr, flags, master] = line.split(' ');
      const f = flags.split(',');
      return {
        id,
        addr: addr.split('@')[0],
        myself: f.includes('myself'),
        role: f.includes('slave') ? 'slave' : 'master',
        master,
        failing: f.includes('fail') || f.includes('fail?'),
      };
    });
}

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
        last = await unhealthy(live());
        if (!last) return;
      } catch (e) {
        last = String(e);
      }
      if (Date.now() > deadline) throw new Error(`Redis Cluster not healthy after ${timeoutMs} ms: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** What is not healthy yet among the live nodes ('' when all is). */
  const unhealthy = async (alive: ClusterNode[]): Promise<string> => {
    const liveKeys = new Set(alive.map(key));
    for (const n of alive) {
      const info = (await admin(n).call('CLUSTER', 'INFO')) as string;
      const field = (f: string) => new RegExp(`^${f}:(\\S+)`, 'm').exec(info)?.[1];
      if (field('cluster_state') !== 'ok' || field('cluster_slots_ok') !== '16384') return `${key(n)}: ${field('cluster_state')}`;
      // this node's slot map: only live masters; every other live node is a replica (checked below)
      const map = (await admin(n).call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
      const masterKeys = new Set(map.map((e) => `${e[2][0]}:${e[2][1]}`));
      if (masterKeys.size < masters || ![...masterKeys].every((k) => liveKeys.has(k))) return `${key(n)} sees masters ${[...masterKeys]}`;
      const repl = await admin(n).info('replication');
      if (/^role:slave/m.test(repl) && !/^master_link_status:up/m.test(repl)) return `${key(n)}: replica link down`;
      if (/^role:master/m.test(repl) && !masterKeys.has(key(n))) return `${key(n)}: a master without slots (not a replica yet)`;
    }
    // every node knows every live node's role and master (gossip): a master ignores a failover
    // request or vote of a replica it does not know as one of its own
    const views = await Promise.all(alive.map(async (n) => parseNodes((await admin(n).call('CLUSTER', 'NODES')) as string)));
    const truth = new Map(views.map((v, i) => [key(alive[i]), v.find((x) => x.myself)!]));
    const idOf = new Map([...truth.values()].map((x) => [x.id, x.addr]));
    for (const [i, view] of views.entries()) {
      for (const x of view) {
        const t = truth.get(x.addr);
        if (!t) continue; // a dead node
        if (x.role !== t.role || (t.role === 'slave' && idOf.get(x.master) !== idOf.get(t.master)) || x.failing) {
          return `${key(alive[i])} sees ${x.addr} as ${x.role}${x.failing ? ' (failing)' : ''} of ${idOf.get(x.master) ?? '-'}`;
        }
      }
    }
    return '';
  };

  const slotMap = async (): Promise<Array<{ from: number; to: number; master: ClusterNode }>> => {
    const n = live()[0];
    const slots = (await admin(n).call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, ...unknown[]]]>;
    return slots
      .map(([from, to, m]) => ({ from: Number(from), to: Number(to), master: { host: String(m[0]), port: Number(m[1]) } }))
      .sort((a, b) => a.from - b.from);
  };

  const args = new Map<string, string[]>();
  const launch = async (node: ClusterNode): Promise<void> => {
    const nodeDir = join(dir.path, String(node.port));
    procs.set(key(node), spawnServer(bin, args.get(key(node))!, { cwd: nodeDir }));
    await waitForPort(node.port, 20_000);
  };

  try {
    for (let i = 0; i < total; i++) {
      const port = ports[2 * i];
      const nodeDir = join(dir.path, String(port));
      mkdirSync(nodeDir);
      const node = { host: LOOPBACK, port };
      nodes.push(node);
      args.set(key(node), [
        '--port', String(port),
        '--bind', LOOPBACK,
        '--dir', nodeDir,
        '--cluster-enabled', 'yes',
        '--cluster-port', String(ports[2 * i + 1]),
        '--cluster-config-file', 'nodes.conf',
        '--cluster-node-timeout', String(JOIN_NODE_TIMEOUT_MS),
        '--cluster-announce-ip', LOOPBACK,
        '--repl-diskless-sync-delay', '0',
        '--save', '',
        '--appendonly', 'no',
        '--daemonize', 'no',
        '--protected-mode', 'no',
        '--loglevel', 'notice',
        '--logfile', '',
      ]);
    }
    await Promise.all(nodes.map(launch));
    await run(cli, ['--cluster', 'create', ...nodes.map(key), '--cluster-replicas', String(replicas), '--cluster-yes'], 60_000);
    await waitHealthy();
    // joined: from now on the timeout asked for (also for a node restarted later)
    const nodeTimeout = String(opts.nodeTimeoutMs ?? 15_000);
    await Promise.all(nodes.map((n) => admin(n).call('CONFIG', 'SET', 'cluster-node-timeout', nodeTimeout)));
    for (const a of args.values()) a[a.indexOf('--cluster-node-timeout') + 1] = nodeTimeout;
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
    async replicasOf(master) {
      // the master's own list (CLUSTER SLOTS names a replica only once its offset was gossiped)
      const info = await admin(master).info('replication');
      return [...info.matchAll(/^slave\d+:ip=([^,]+),port=(\d+),state=online/gm)].map((m) => ({ host: m[1], port: Number(m[2]) }));
    },
    signal(node, sig) {
      const p = procs.get(key(node));
      if (!p) throw new Error(`no node ${key(node)}`);
      p.child.kill(sig);
    },
    async restart(node) {
      const p = procs.get(key(node));
      if (p && p.child.exitCode === null && p.child.signalCode === null) throw new Error(`${key(node)} is running`);
      await launch(node);
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
    logs() {
      return [...procs.entries()].map(([k, p]) => `--- ${k}\n${p.output()}`).join('\n');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await halt();
      dir.remove();
    },
  };
}
