-- Per-task history: the trigger {{prefix}}tasks_history appends one entry to tasks.history
-- whenever status changes (whichever query made the transition), for tasks created with
-- history_limit > 0 (the store option historyLimit). A SQLite trigger cannot change the new
-- row: AFTER UPDATE OF status, an UPDATE of that row (by seq, its rowid).
--
-- Mirrors core/history.ts like postgres/1-task-history.sql: the entry `at,<from><to>,version
-- [,error]` (statusCode = the index in ALL_STATUSES, the CASE lists below in that order;
-- historyKeepsError), entries joined by char(30) (HISTORY_SEPARATOR), at most history_limit.
--
-- Locks: none of its own: it runs inside the writer's transaction.
DROP TRIGGER IF EXISTS {{prefix}}tasks_history;
CREATE TRIGGER {{prefix}}tasks_history AFTER UPDATE OF status ON {{prefix}}tasks FOR EACH ROW
WHEN OLD.status IS NOT NEW.status AND NEW.history_limit > 0
BEGIN
  UPDATE {{prefix}}tasks SET history = coalesce(nullif(history, '') || char(30), '') || NEW.updated_at || ','
      || (CASE OLD.status WHEN 'PENDING_SUBMIT' THEN '0' WHEN 'SUBMITTING' THEN '1' WHEN 'SUBMITTED' THEN '2' WHEN 'RUNNING' THEN '3'
          WHEN 'SUCCEEDED' THEN '4' WHEN 'FAILED' THEN '5' WHEN 'CANCELED' THEN '6' WHEN 'TIMED_OUT' THEN '7' WHEN 'SUBMIT_UNKNOWN' THEN '8' END)
      || (CASE NEW.status WHEN 'PENDING_SUBMIT' THEN '0' WHEN 'SUBMITTING' THEN '1' WHEN 'SUBMITTED' THEN '2' WHEN 'RUNNING' THEN '3'
          WHEN 'SUCCEEDED' THEN '4' WHEN 'FAILED' THEN '5' WHEN 'CANCELED' THEN '6' WHEN 'TIMED_OUT' THEN '7' WHEN 'SUBMIT_UNKNOWN' THEN '8' END)
      || ',' || NEW.version
      || CASE WHEN NEW.error IS NOT NULL AND (NEW.status IN ('FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN') OR (OLD.status = 'SUBMITTING' AND NEW.status = 'PENDING_SUBMIT'))
          THEN ',' || replace(substr(NEW.error, 1, 1000), char(30), ' ') ELSE '' END
    WHERE seq = NEW.seq;
  UPDATE {{prefix}}tasks SET history = substr(history, instr(history, char(30)) + 1)
    WHERE seq = NEW.seq AND length(history) - length(replace(history, char(30), '')) >= history_limit;
END;
