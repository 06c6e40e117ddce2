/** Which store the demo runs on, chosen by PQ_STORE (+ a URL or a file path). */
export type StoreSelection =
  | { kind: 'memory' }
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string }
  | { kind: 'mysql'; url: string }
  | { kind: 'redis'; url: string; connectTimeoutMs?: number };

export const STORE_KINDS = ['memory', 'sqlite', 'postgres', 'mysql', 'redis'] as const;

/**
 * Reads PQ_STORE=memory (default) | sqlite | postgres | mysql | redis and the matching
 * PQ_SQLITE_PATH / PQ_POSTGRES_URL / PQ_MYSQL_URL / PQ_REDIS_URL; PQ_REDIS_CONNECT_TIMEOUT_MS: how
 * long start-up waits for Redis (default 10000).
 */
export function storeSelectionFromEnv(env: NodeJS.ProcessEnv): StoreSelection {
  const kind = (env.PQ_STORE ?? 'memory').trim().toLowerCase();
  switch (kind) {
    case 'memory':
      return { kind };
    case 'sqlite':
      return { kind, path: env.PQ_SQLITE_PATH ?? 'demo-queue.sqlite' };
    case 'postgres':
      return { kind, url: required(env, 'PQ_POSTGRES_URL', 'postgres://postgres@127.0.0.1:5432/demo') };
    case 'mysql':
      return { kind, url: required(env, 'PQ_MYSQL_URL', 'mysql://root@127.0.0.1:3306/demo') };
    case 'redis':
      return { kind, url: env.PQ_REDIS_URL ?? 'redis://127.0.0.1:6379', connectTimeoutMs: timeoutMs(env, 'PQ_REDIS_CONNECT_TIMEOUT_MS') };
    default:
      throw new Error(`PQ_STORE must be one of ${STORE_KINDS.join(', ')}; got "${env.PQ_STORE}"`);
  }
}

function timeoutMs(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer (milliseconds), got "${raw}"`);
  return n;
}

function required(env: NodeJS.ProcessEnv, name: string, example: string): string {
  const v = env[name];
  if (!v) throw new Error(`PQ_STORE=${env.PQ_STORE} needs ${name} (for example ${example})`);
  return v;
}

/** A selection for logs, without credentials. */
export function describeStore(s: StoreSelection): string {
  switch (s.kind) {
    case 'memory':
      return 'memory';
    case 'sqlite':
      return `sqlite (${s.path})`;
    default:
      return `${s.kind} (${redact(s.url)})`;
  }
}

export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<url>';
  }
}
