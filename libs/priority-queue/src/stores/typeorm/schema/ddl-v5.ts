import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';
import { claimFunctionV3 } from './pg-claim-v3';
import { claimPollsFunction } from './pg-functions';

/**
 * Version 5 of the schema (PostgreSQL speed; MySQL / MariaDB and SQLite: only recorded).
 *
 * The primary key of `<prefix>tasks` moves from `seq` to `id`: the unique index on id becomes
 * the primary key's index (`PRIMARY KEY USING INDEX`, no rebuild) and seq keeps no index of its
 * own. Every row version of a task had an entry in both (a create, a claim and a complete are
 * non-HOT writes: three entries each), and the claim's and the complete's entries repeat a key
 * already in the index, so full leaf pages were cleaned by bottom-up deletion (heap visits): a
 * quarter of the index work of a drain. seq stays a NOT NULL column from its sequence (still the
 * final tie-break, unique by construction) and is found where the store needs it through the
 * indexes that carry it (lane index, status index). Rows the store has already read are found
 * again by id (sql/row-key.ts) and the claim / claimPolls functions select by id.
 *
 * Guarded: the key moves only while it is still on seq.
 */
export function ddlV5(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'postgres') return [];
  return [
    `DO $pk$ BEGIN
      IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
          WHERE i.indrelid = '${t.tasks}'::regclass AND i.indisprimary AND a.attname = 'seq') THEN
        ALTER TABLE ${t.tasks} DROP CONSTRAINT ${t.tasks}_pkey;
        ALTER TABLE ${t.tasks} ADD CONSTRAINT ${t.tasks}_pkey PRIMARY KEY USING INDEX ${t.tasks}_id;
      END IF;
    END $pk$`,
    claimFunctionV3(t, 'id'),
    claimPollsFunction(t, 'id'),
  ];
}

/** Back to version 4: the primary key on seq again, a unique index on id, the functions by seq. */
export function undoV5(kind: DialectKind, t: TableNames): string[] {
  if (kind !== 'postgres') return [];
  return [
    `DO $pk$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
          WHERE i.indrelid = '${t.tasks}'::regclass AND i.indisprimary AND a.attname = 'seq') THEN
        ALTER TABLE ${t.tasks} DROP CONSTRAINT IF EXISTS ${t.tasks}_pkey;
        ALTER TABLE ${t.tasks} ADD CONSTRAINT ${t.tasks}_pkey PRIMARY KEY (seq);
      END IF;
    END $pk$`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${t.tasks}_id ON ${t.tasks} (id)`,
    claimFunctionV3(t, 'seq'),
    claimPollsFunction(t, 'seq'),
  ];
}
