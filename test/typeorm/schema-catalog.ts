import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';

/**
 * What a table prefix owns in a database, read from the server's catalog: tables with their
 * columns, indexes with their definitions, functions (arguments, result, settings and a hash of
 * the body as stored), triggers. Names are given with the prefix replaced by `<p>`, so that the
 * catalogs of two prefixes compare equal when their schemas are the same.
 */
export interface SchemaCatalog {
  tables: Record<string, string[]>;
  indexes: Record<string, string>;
  functions: Record<string, string>;
  triggers: Record<string, string>;
}

type Row = Record<string, unknown>;

export async function schemaCatalog(ds: DataSource, prefix: string): Promise<SchemaCatalog> {
  const kind = ds.options.type === 'postgres' ? 'postgres' : ds.options.type === 'mysql' || ds.options.type === 'mariadb' ? 'mysql' : 'sqlite';
  const norm = (v: unknown) => String(v ?? '').split(prefix).join('<p>');
  const ws = (v: unknown) => norm(v).replace(/\s+/g, ' ').trim();
  const mine = (name: unknown) => String(name).startsWith(prefix);
  const out: SchemaCatalog = { tables: {}, indexes: {}, functions: {}, triggers: {} };
  const q = (sql: string, params: unknown[] = []) => ds.query(sql, params) as Promise<Row[]>;
  const add = (rec: Record<string, string>, key: unknown, value: string) => (rec[norm(key)] = value);
  const col = (t: Row, c: string) => {
    const key = norm(t.table_name);
    (out.tables[key] ??= []).push(c);
  };
  if (kind === 'postgres') {
    for (const r of await q(
      `SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    )) {
      if (mine(r.table_name)) col(r, `${r.column_name} ${r.data_type}(${r.character_maximum_length ?? ''}) ${r.is_nullable} ${norm(r.column_default)}`);
    }
    for (const r of await q(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()`)) {
      if (mine(r.indexname)) add(out.indexes, r.indexname, norm(r.indexdef));
    }
    for (const r of await q(
      `SELECT p.proname, pg_get_function_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS result, p.proconfig::text AS config,
          p.prosrc FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace`,
    )) {
      if (mine(r.proname)) add(out.functions, r.proname, `(${norm(r.args)}) -> ${norm(r.result)} ${r.config ?? ''} body ${hash(norm(r.prosrc))}`);
    }
    for (const r of await q(`SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE NOT tgisinternal`)) {
      if (mine(r.tgname)) add(out.triggers, r.tgname, norm(r.def));
    }
    for (const r of await q(`SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = current_schema()`)) {
      if (mine(r.sequence_name)) add(out.indexes, `sequence ${r.sequence_name}`, 'sequence');
    }
  } else if (kind === 'mysql') {
    for (const r of await q(
      `SELECT TABLE_NAME AS table_name, COLUMN_NAME AS c, COLUMN_TYPE AS t, IS_NULLABLE AS n, COLUMN_DEFAULT AS d, EXTRA AS e, COLLATION_NAME AS k
        FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    )) {
      if (mine(r.table_name)) col(r, `${r.c} ${r.t} ${r.n} ${r.d ?? ''} ${r.e} ${r.k ?? ''}`);
    }
    for (const r of await q(`SELECT TABLE_NAME AS t, ENGINE AS e, TABLE_COLLATION AS k FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()`)) {
      if (mine(r.t)) (out.tables[norm(r.t)] ??= []).push(`table ${r.e} ${r.k}`);
    }
    const idx = new Map<string, string[]>();
    for (const r of await q(
      `SELECT TABLE_NAME AS t, INDEX_NAME AS i, NON_UNIQUE AS u, COLUMN_NAME AS c FROM information_schema.STATISTICS
        WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    )) {
      if (!mine(r.t)) continue;
      const key = `${norm(r.t)}.${norm(r.i)}`;
      const list = idx.get(key) ?? [Number(r.u) === 0 ? 'unique' : 'index'];
      list.push(String(r.c));
      idx.set(key, list);
    }
    for (const [k, v] of idx) out.indexes[k] = v.join(' ');
    for (const r of await q(
      `SELECT TRIGGER_NAME AS n, EVENT_MANIPULATION AS ev, ACTION_TIMING AS at, EVENT_OBJECT_TABLE AS t, ACTION_STATEMENT AS s
        FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()`,
    )) {
      if (mine(r.n)) add(out.triggers, r.n, `${r.at} ${r.ev} ON ${norm(r.t)} body ${hash(ws(r.s))}`);
    }
  } else {
    for (const m of await q(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('table', 'index', 'trigger')`)) {
      if (!mine(m.name)) continue;
      if (m.type === 'table') {
        for (const c of await q(`SELECT name, type, "notnull" AS nn, dflt_value AS d, pk FROM pragma_table_info(?)`, [m.name])) {
          col({ table_name: m.name }, `${c.name} ${c.type} ${c.nn} ${c.d ?? ''} ${c.pk}`);
        }
      } else if (m.type === 'index') add(out.indexes, m.name, ws(m.sql));
      else add(out.triggers, m.name, hash(ws(m.sql)));
    }
  }
  return out;
}

function hash(s: string): string {
  return createHash('sha1').update(s).digest('hex').slice(0, 16);
}
