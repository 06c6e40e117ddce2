import type { Db } from './db';

/**
 * SQLite: the store commits one short transaction per operation, and SQLite's default rollback
 * journal syncs the file on every commit (~15 ms each on a plain disk, so ~70 completes/s).
 * When the database still uses that default (`journal_mode = delete`), init() switches the
 * store's connection to WAL with `synchronous = NORMAL`, as SQLite recommends for this kind of
 * load (a commit is then durable against a process crash, not against a power loss before
 * the next checkpoint). A journal mode you chose (WAL, memory, ...) is left alone, and so is
 * synchronous then. Opt out with `tuneSqlite: false`.
 */
export async function tuneSqlite(db: Db): Promise<void> {
  const [r] = await db.rows<{ journal_mode?: unknown }>('PRAGMA journal_mode');
  if (String(r?.journal_mode ?? '').toLowerCase() !== 'delete') return;
  await db.rows('PRAGMA journal_mode = WAL');
  await db.rows('PRAGMA synchronous = NORMAL');
}
