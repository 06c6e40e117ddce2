import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';

/**
 * The schema's `.sql` files: `schema/<dialect>/*.sql` beside this file, shipped as assets
 * (scripts/build-lib.js copies every `.sql` under src/ to the same place under dist/, as it does
 * the Redis store's Lua scripts), read on first use and kept.
 *
 * File format (what a DBA sees is what runs):
 * - a statement ends at a line that ends with `;` and starts in column 1 (not blank, not `--`).
 *   Lines inside a body (PL/pgSQL between `$fn$` quotes, a trigger's BEGIN ... END) are
 *   indented, or are the body's last line (`$fn$;`, `END;`). The `;` is not sent;
 * - `--` lines before a statement document it and are not sent; comments inside a statement
 *   are (PL/pgSQL keeps them in its body);
 * - `{{prefix}}` is the store's table prefix (every table, index, function and trigger name
 *   starts with it). The only placeholder, substituted here and nowhere else.
 */
const SCHEMA_DIR = __dirname;

const PLACEHOLDER = /\{\{([A-Za-z_]+)\}\}/g;

const texts = new Map<string, string>();

/** The text of `schema/<kind>/<file>`, read once. */
export function schemaFileText(kind: DialectKind, file: string): string {
  const path = join(SCHEMA_DIR, kind, file);
  let text = texts.get(path);
  if (text === undefined) {
    text = readFileSync(path, 'utf8');
    texts.set(path, text);
  }
  return text;
}

/** The statements of a file's text, names substituted, in file order. */
export function sqlStatements(text: string, t: TableNames, origin = 'SQL file'): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  for (const line of text.split('\n')) {
    if (cur.length === 0 && (line.trim() === '' || line.startsWith('--'))) continue;
    if (/^[^\s-].*;\s*$/.test(line)) {
      cur.push(line.replace(/;\s*$/, ''));
      out.push(substitute(cur.join('\n'), t, origin));
      cur = [];
    } else {
      cur.push(line);
    }
  }
  if (cur.some((l) => l.trim() !== '' && !l.trimStart().startsWith('--'))) {
    throw new Error(`${origin}: the last statement does not end with a line that ends with ';' in column 1`);
  }
  return out;
}

/** The statements of `schema/<kind>/<file>` for the tables of `t`. */
export function schemaFileStatements(kind: DialectKind, file: string, t: TableNames): string[] {
  return sqlStatements(schemaFileText(kind, file), t, `schema/${kind}/${file}`);
}

function substitute(statement: string, t: TableNames, origin: string): string {
  return statement.replace(PLACEHOLDER, (_m, name: string) => {
    if (name !== 'prefix') throw new Error(`${origin}: unknown placeholder {{${name}}}`);
    return t.prefix;
  });
}
