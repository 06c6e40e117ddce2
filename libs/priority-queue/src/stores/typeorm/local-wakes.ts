import { LocalWakes } from '../../core/local-wakes';

/**
 * In-process wake-ups of the TypeORM store: the store instances of one DataSource and one
 * queue (same table prefix) in this process share one LocalWakes, so that a write through any
 * of them (a create on the API side of the process, a sweep that put tasks back) wakes the
 * workers of all of them at once, without a round trip. Other processes learn of the write
 * through PostgreSQL NOTIFY or, on MySQL / MariaDB and SQLite, through their ChangeWatcher.
 */
const hubs = new WeakMap<object, Map<string, LocalWakes>>();

/** The LocalWakes of a DataSource and queue channel (made on first use, kept with the DataSource). */
export function localWakes(dataSource: object, channel: string): LocalWakes {
  let byChannel = hubs.get(dataSource);
  if (!byChannel) hubs.set(dataSource, (byChannel = new Map()));
  let hub = byChannel.get(channel);
  if (!hub) byChannel.set(channel, (hub = new LocalWakes()));
  return hub;
}
