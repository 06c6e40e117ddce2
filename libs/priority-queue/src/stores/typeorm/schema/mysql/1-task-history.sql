-- Per-task history: the trigger {{prefix}}tasks_history appends one entry to tasks.history
-- whenever status changes, in the statement that changes it (whichever query made the
-- transition), for tasks created with history_limit > 0 (the store option historyLimit).
-- BEFORE UPDATE: it sets the new row's history, no second write.
--
-- Mirrors core/history.ts like postgres/1-task-history.sql (statusCode = the index in
-- ALL_STATUSES, the FIELD() lists below in that order; historyKeepsError; HISTORY_SEPARATOR
-- chr(30); at most history_limit entries).
--
-- Rights: creating a trigger needs the TRIGGER privilege; with binary logging on, also SUPER
-- unless the server runs with log_bin_trust_function_creators = 1 (docs/TYPEORM.md).
-- Locks: none of its own: it runs inside the row's UPDATE.
DROP TRIGGER IF EXISTS {{prefix}}tasks_history;
CREATE TRIGGER {{prefix}}tasks_history BEFORE UPDATE ON {{prefix}}tasks FOR EACH ROW
BEGIN
  DECLARE e LONGTEXT;
  DECLARE h LONGTEXT;
  IF NEW.status <> OLD.status AND NEW.history_limit > 0 THEN
    SET e = CONCAT(NEW.updated_at, ',',
      (FIELD(OLD.status, 'PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN') - 1),
      (FIELD(NEW.status, 'PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN') - 1),
      ',', NEW.version);
    IF NEW.error IS NOT NULL AND (NEW.status IN ('FAILED', 'CANCELED', 'TIMED_OUT', 'SUBMIT_UNKNOWN') OR (OLD.status = 'SUBMITTING' AND NEW.status = 'PENDING_SUBMIT')) THEN
      SET e = CONCAT(e, ',', REPLACE(LEFT(NEW.error, 1000), CHAR(30 USING utf8mb4), ' '));
    END IF;
    IF NEW.history IS NULL OR NEW.history = '' THEN
      SET NEW.history = e;
    ELSE
      SET h = CONCAT(NEW.history, CHAR(30 USING utf8mb4), e);
      IF CHAR_LENGTH(h) > 7 * NEW.history_limit AND CHAR_LENGTH(h) - CHAR_LENGTH(REPLACE(h, CHAR(30 USING utf8mb4), '')) >= NEW.history_limit THEN
        SET h = SUBSTRING(h, LOCATE(CHAR(30 USING utf8mb4), h) + 1);
      END IF;
      SET NEW.history = h;
    END IF;
  END IF;
END;
