import { luaScripts } from '../../../libs/priority-queue/src/stores/redis/scripts';
import type { ChunkMatch } from '../../support/tcp-proxy';

/** The chunk of a call of one of the store's Lua scripts (EVALSHA carries its sha). */
export function luaCall(script: keyof ReturnType<typeof luaScripts>): ChunkMatch[] {
  const sha = Buffer.from(luaScripts()[script].sha);
  return [(c) => c.includes(sha)];
}

/**
 * The chunk of one execution of a PostgreSQL named prepared statement (stores/typeorm/pg-direct.ts)
 * whose text matches `text`: its Parse carries the text once per connection (the name is learnt
 * there), every execution's Bind carries the name.
 */
export function pgPrepared(text: string): ChunkMatch[] {
  let name: string | null = null;
  const parse = new RegExp(`(pq_[0-9a-f]{24})\\x00[^\\x00]*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  return [
    (c) => {
      const s = c.toString('latin1');
      name ??= parse.exec(s)?.[1] ?? null;
      return name !== null && s.includes(`\x00${name}\x00`);
    },
  ];
}
