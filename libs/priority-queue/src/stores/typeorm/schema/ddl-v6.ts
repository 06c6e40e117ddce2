import { ALL_STATUSES } from '../../../core/task';
import type { DialectKind } from '../dialects/dialect';
import type { TableNames } from '../names';

/**
 * Version 6 of the schema: per-task history (core/history.ts), on every dialect.
 *
 * - `history`: the task's last transitions in the text form of core/history.ts
 *   (`at,<from><to>,version[,error]` joined by chr(30)); `history_limit`: how many it keeps,
 *   written by create() from the store option historyLimit (0 = none; rows of older versions
 *   get 0).
 * - A row trigger appends one entry whenever `status` changes, in the statement that changes it
 *   (the same atomic step, whichever query or function made the transition), with `at` =
 *   updated_at (every transition writes it), the new version, and the error of a transition
 *   that ends an attempt or the task without success. One entry is added per transition, so
 *   keeping the text within history_limit entries drops at most its first one.
 *   PostgreSQL and MySQL / MariaDB: a BEFORE UPDATE trigger sets the new row's `history` (no
 *   second write); SQLite, whose triggers cannot change the new row: AFTER UPDATE OF status,
 *   an UPDATE of that row.
 * MySQL / MariaDB with binary logging on: creating a trigger needs the TRIGGER privilege and,
 * unless log_bin_trust_function_creators = 1, SUPER (docs/TYPEORM.md).
 */
export function ddlV6(kind: DialectKind, t: TableNames): string[] {
  const T = t.tasks;
  const ends = `NEW.error IS NOT NULL AND (NEW.status IN ('FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN') OR (OLD.status = 'SUBMITTING' AND NEW.status = 'PENDING_SUBMIT'))`;
  switch (kind) {
    case 'postgres': {
      const code = (e: string) => `(array_position(ARRAY[${names()}]::text[], ${e}::text) - 1)`;
      return [
        `ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS history text NULL`,
        `ALTER TABLE ${T} ADD COLUMN IF NOT EXISTS history_limit smallint NOT NULL DEFAULT 0`,
        `CREATE OR REPLACE FUNCTION ${historyFunction(t)}() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  e text := NEW.updated_at || ',' || ${code('OLD.status')} || ${code('NEW.status')} || ',' || NEW.version;
  h text;
BEGIN
  IF ${ends} THEN
    e := e || ',' || replace(left(NEW.error, 1000), chr(30), ' ');
  END IF;
  IF NEW.history IS NULL OR NEW.history = '' THEN
    NEW.history := e;
  ELSE
    h := NEW.history || chr(30) || e;
    IF length(h) > 7 * NEW.history_limit AND length(h) - length(replace(h, chr(30), '')) >= NEW.history_limit THEN
      h := substr(h, strpos(h, chr(30)) + 1);
    END IF;
    NEW.history := h;
  END IF;
  RETURN NEW;
END
$fn$`,
        `DROP TRIGGER IF EXISTS ${trigger(t)} ON ${T}`,
        `CREATE TRIGGER ${trigger(t)} BEFORE UPDATE OF status ON ${T} FOR EACH ROW
          WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.history_limit > 0) EXECUTE FUNCTION ${historyFunction(t)}()`,
      ];
    }
    case 'mysql': {
      const sep = 'CHAR(30 USING utf8mb4)';
      const code = (e: string) => `(FIELD(${e}, ${names()}) - 1)`;
      return [
        `ALTER TABLE ${T} ADD COLUMN history LONGTEXT NULL, ADD COLUMN history_limit SMALLINT NOT NULL DEFAULT 0`,
        `DROP TRIGGER IF EXISTS ${trigger(t)}`,
        `CREATE TRIGGER ${trigger(t)} BEFORE UPDATE ON ${T} FOR EACH ROW
BEGIN
  DECLARE e LONGTEXT;
  DECLARE h LONGTEXT;
  IF NEW.status <> OLD.status AND NEW.history_limit > 0 THEN
    SET e = CONCAT(NEW.updated_at, ',', ${code('OLD.status')}, ${code('NEW.status')}, ',', NEW.version);
    IF ${ends} THEN
      SET e = CONCAT(e, ',', REPLACE(LEFT(NEW.error, 1000), ${sep}, ' '));
    END IF;
    IF NEW.history IS NULL OR NEW.history = '' THEN
      SET NEW.history = e;
    ELSE
      SET h = CONCAT(NEW.history, ${sep}, e);
      IF CHAR_LENGTH(h) > 7 * NEW.history_limit AND CHAR_LENGTH(h) - CHAR_LENGTH(REPLACE(h, ${sep}, '')) >= NEW.history_limit THEN
        SET h = SUBSTRING(h, LOCATE(${sep}, h) + 1);
      END IF;
      SET NEW.history = h;
    END IF;
  END IF;
END`,
      ];
    }
    case 'sqlite': {
      const code = (e: string) => `(CASE ${e} ${ALL_STATUSES.map((s, i) => `WHEN '${s}' THEN '${i}'`).join(' ')} END)`;
      const entry = `NEW.updated_at || ',' || ${code('OLD.status')} || ${code('NEW.status')} || ',' || NEW.version ||
        CASE WHEN ${ends} THEN ',' || replace(substr(NEW.error, 1, 1000), char(30), ' ') ELSE '' END`;
      return [
        `ALTER TABLE ${T} ADD COLUMN history TEXT NULL`,
        `ALTER TABLE ${T} ADD COLUMN history_limit INTEGER NOT NULL DEFAULT 0`,
        `DROP TRIGGER IF EXISTS ${trigger(t)}`,
        `CREATE TRIGGER ${trigger(t)} AFTER UPDATE OF status ON ${T} FOR EACH ROW
          WHEN OLD.status IS NOT NEW.status AND NEW.history_limit > 0
BEGIN
  UPDATE ${T} SET history = CASE WHEN history IS NULL OR history = '' THEN ${entry} ELSE history || char(30) || ${entry} END
    WHERE seq = NEW.seq;
  UPDATE ${T} SET history = substr(history, instr(history, char(30)) + 1)
    WHERE seq = NEW.seq AND length(history) - length(replace(history, char(30), '')) >= history_limit;
END`,
      ];
    }
  }
}

export function undoV6(kind: DialectKind, t: TableNames): string[] {
  const T = t.tasks;
  switch (kind) {
    case 'postgres':
      return [
        `DROP TRIGGER IF EXISTS ${trigger(t)} ON ${T}`,
        `DROP FUNCTION IF EXISTS ${historyFunction(t)}()`,
        `ALTER TABLE ${T} DROP COLUMN IF EXISTS history, DROP COLUMN IF EXISTS history_limit`,
      ];
    case 'mysql':
      return [`DROP TRIGGER IF EXISTS ${trigger(t)}`, `ALTER TABLE ${T} DROP COLUMN history, DROP COLUMN history_limit`];
    case 'sqlite':
      return [`DROP TRIGGER IF EXISTS ${trigger(t)}`, `ALTER TABLE ${T} DROP COLUMN history`, `ALTER TABLE ${T} DROP COLUMN history_limit`];
  }
}

function trigger(t: TableNames): string {
  return `${t.prefix}tasks_history`;
}

function historyFunction(t: TableNames): string {
  return `${t.prefix}task_history`;
}

function names(): string {
  return ALL_STATUSES.map((s) => `'${s}'`).join(', ');
}
