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

/**
 * The chunk of a MySQL / MariaDB completeAndClaim transaction (stores/typeorm/sql/complete-and-claim.ts)
 * to drop at, on a connection (mysql2 sends every statement as its own text query):
 * - 'commit': its COMMIT (MariaDB: the compound statement that ends with it), once its completes (the batch's UPDATE of tasks: finished_at set, lease cleared) and then its claim
 *   statements were seen in it: the transaction commits, its reply is lost. A COMMIT before any
 *   claim statement (a complete() alone) starts over.
 * - 'claim': the first claim statement after a complete: the server runs it, then sees the end
 *   of the stream before COMMIT and rolls the transaction back. Not reset by a COMMIT: arm it
 *   around one call only (a complete committed apart from its claim is dropped at the claim too).
 */
export function mysqlCompleteAndClaim(stage: 'commit' | 'claim'): ChunkMatch[] {
  let complete = false;
  let claim = false;
  return [
    (c) => {
      const s = c.toString('latin1');
      // MariaDB sends a transaction's last writes and its COMMIT as one compound statement
      // (stores/typeorm/mariadb-batch.ts): one chunk may hold statements and the COMMIT
      const commits = /^[\s\S]{5}COMMIT$/.test(s) || /;\nCOMMIT;\nEND$/.test(s);
      if (/UPDATE \w*tasks SET status = [\s\S]*finished_at = [\s\S]*lease_owner = NULL, lease_id = NULL/.test(s)) {
        complete = !(commits && stage === 'commit'); // a complete() alone, committed in this chunk: start over
        claim = false;
        return false;
      }
      if (complete && /EXISTS \(SELECT 1 FROM \w*tasks|FROM \w*lanes|INTO \w*lanes|SET status = 'SUBMITTING'/.test(s)) {
        if (stage === 'claim') return true;
        claim = true;
      }
      if (commits) {
        if (complete && claim) return true;
        if (stage === 'commit') complete = false;
      }
      return false;
    },
  ];
}
