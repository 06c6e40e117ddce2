import type { Cluster, Redis } from 'ioredis';
import { ConfigurationError } from '../../core/errors';
import { Messages } from '../../core/messages';

/** A single-node / Sentinel connection or a Redis Cluster client. */
export type RedisConnection = Redis | Cluster;

/** Throws a clear error when `value` is not an ioredis client (a URL string, an options object...). */
export function assertRedisConnection(value: unknown, where: string): asserts value is RedisConnection {
  const c = value as Partial<Record<'call' | 'duplicate' | 'publish', unknown>> | null;
  if (typeof c === 'object' && c !== null && typeof c.call === 'function' && typeof c.duplicate === 'function' && typeof c.publish === 'function') return;
  throw new ConfigurationError(Messages.notRedisConnection(where, describeValue(value)));
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  if (typeof value !== 'object') return `${typeof value} ${String(value)}`;
  const name = (value as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : `an object with keys ${Object.keys(value).join(', ') || '(none)'}`;
}

/** `Redis at host:port` / `Redis Cluster at host:port, ...`, without credentials. */
export function describeRedis(c: RedisConnection): string {
  const startupNodes = (c as unknown as { startupNodes?: unknown }).startupNodes;
  if (Array.isArray(startupNodes)) {
    const nodes = startupNodes.map((n: unknown) => (typeof n === 'object' && n !== null ? `${(n as { host?: string }).host ?? 'localhost'}:${(n as { port?: number }).port ?? 6379}` : String(n)));
    return `Redis Cluster at ${nodes.join(', ')}`;
  }
  const o = (c as Redis).options ?? {};
  if (o.path) return `Redis at ${o.path}`;
  return `Redis at ${o.host ?? 'localhost'}:${o.port ?? 6379}${o.db ? ` (db ${o.db})` : ''}`;
}
