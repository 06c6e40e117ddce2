import { TaskNotFoundError } from '../../../core/errors';
import { parseHistoryText, withCreation, type TaskHistoryEntry } from '../../../core/history';
import type { StoreContext } from '../context';
import { num } from '../rows';
import { byId } from './by-id';
import { raw, sql } from './sql';

/** history: the task's `history` text (kept by the trigger of schema/<dialect>/1-task-history.sql) with its creation; by the unique index on id. */
export async function taskHistory(c: StoreContext, id: string): Promise<TaskHistoryEntry[]> {
  const s = sql`SELECT created_at, history, history_limit FROM ${raw(c.t.tasks)} WHERE ${byId(c, id)}`;
  const [r] = await c.db.rows(s.text, s.params);
  if (!r) throw new TaskNotFoundError(id);
  const text = r.history === null || r.history === undefined ? null : String(r.history);
  return withCreation({ createdAt: num(r.created_at) }, parseHistoryText(text), num(r.history_limit));
}
