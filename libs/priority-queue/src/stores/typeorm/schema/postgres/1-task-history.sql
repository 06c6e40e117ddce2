-- Per-task history: the trigger {{prefix}}tasks_history appends one entry to tasks.history
-- whenever status changes, in the statement that changes it (whichever query or function made
-- the transition), for tasks created with history_limit > 0 (the store option historyLimit).
-- BEFORE UPDATE: it sets the new row's history, no second write.
--
-- Mirrors core/history.ts: the entry `at,<from><to>,version[,error]` (statusCode: the index in
-- ALL_STATUSES of core/task.ts, listed below in that order; historyKeepsError: which transitions
-- keep the error), entries joined by chr(30) (HISTORY_SEPARATOR), at most history_limit kept:
-- one entry is added per transition, so dropping the first one is enough.
--
-- Locks: none of its own: it runs inside the row's UPDATE.
CREATE OR REPLACE FUNCTION {{prefix}}task_history() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  e text := NEW.updated_at || ',' || (array_position(ARRAY['PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN']::text[], OLD.status::text) - 1) || (array_position(ARRAY['PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN']::text[], NEW.status::text) - 1) || ',' || NEW.version;
  h text;
BEGIN
  IF NEW.error IS NOT NULL AND (NEW.status IN ('FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN') OR (OLD.status = 'SUBMITTING' AND NEW.status = 'PENDING_SUBMIT')) THEN
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
$fn$;
DROP TRIGGER IF EXISTS {{prefix}}tasks_history ON {{prefix}}tasks;
CREATE TRIGGER {{prefix}}tasks_history BEFORE UPDATE OF status ON {{prefix}}tasks FOR EACH ROW
WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.history_limit > 0) EXECUTE FUNCTION {{prefix}}task_history();
