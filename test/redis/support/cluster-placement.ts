import { queueKeys } from '../../../libs/priority-queue/src/stores/redis/keys';
import type { ClusterNode, RedisClusterHandle } from '../../support/servers/redis-cluster';

/** Where one queue's keys live on a Redis Cluster. */
export interface QueuePlacement {
  prefix: string;
  queue: string;
  /** CLUSTER KEYSLOT of the queue's route key, asked of the server. */
  slot: number;
  /** The master serving that slot (CLUSTER SLOTS). */
  master: ClusterNode;
}

const sameNode = (a: ClusterNode, b: ClusterNode) => a.host === b.host && a.port === b.port;

/**
 * A queue name `${queueBase}-<i>` under `prefix` whose hash tag lands on `target`: tries i = 0, 1,
 * ... and asks the server for each key's slot and the slot map for its master (about one try per
 * master on average). The keys come from keys.ts, so a change of the key layout moves with it.
 */
export async function placeQueue(
  cluster: RedisClusterHandle,
  prefix: string,
  queueBase: string,
  target: ClusterNode,
): Promise<QueuePlacement> {
  for (let i = 0; i < 1000; i++) {
    const queue = `${queueBase}-${i}`;
    const slot = await cluster.keySlot(queueKeys(prefix, queue).route[0]);
    const master = await cluster.masterOf(slot);
    if (sameNode(master, target)) return { prefix, queue, slot, master };
  }
  throw new Error(`no queue name ${queueBase}-<i> under ${prefix} lands on ${target.host}:${target.port}`);
}

/** Every key of the queue hashes to the placement's slot (all keys share the hash tag). */
export async function assertPlacement(cluster: RedisClusterHandle, p: QueuePlacement): Promise<void> {
  const keys = queueKeys(p.prefix, p.queue);
  for (const k of [...keys.route, keys.task('some-id'), keys.status('PENDING_SUBMIT'), keys.channel]) {
    const slot = await cluster.keySlot(k);
    if (slot !== p.slot) throw new Error(`key ${k} hashes to slot ${slot}, the queue's route key to ${p.slot}`);
  }
  const master = await cluster.masterOf(p.slot);
  if (!sameNode(master, p.master)) throw new Error(`slot ${p.slot} moved from ${p.master.port} to ${master.port}`);
}
