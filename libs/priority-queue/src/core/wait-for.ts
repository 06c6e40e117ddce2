import { TaskNotFoundError, WaitTimeoutError } from './errors';
import type { TaskEvents } from './events';
import type { TransportSubscriber } from './event-transport.port';
import { MAX_TIMER_MS } from './timers';
import { intOption, validateTaskId } from './validation';
import { isTerminal, type Task } from './task';

export interface WaitForOptions {
  /** Give up after this many ms with WaitTimeoutError (the task is left as it is). Default: no limit. */
  timeoutMs?: number;
  /** Re-read the task this often, in case an event was missed (events are at most once). Default 1000. */
  pollMs?: number;
  /** Stop waiting (rejects with the signal's reason). */
  signal?: AbortSignal;
}

export interface WaitForSources {
  get(id: string): Promise<Task | null>;
  /** Transitions made by this process (they carry the task). */
  events: TaskEvents;
  /** Transitions made by any process, when the queue has a cross-process transport. */
  subscribe?(subscriber: TransportSubscriber): Promise<() => void>;
}

/**
 * Resolves with the task once it is terminal. Listens to this process's events and the queue's
 * cross-process events, and re-reads the task on every hint (a transition of it, a transport
 * gap) and every pollMs: a missed event delays the answer by at most pollMs, never loses it.
 * Rejects with TaskNotFoundError when the task does not exist (or was purged), WaitTimeoutError
 * after timeoutMs.
 */
export function waitForTask(src: WaitForSources, id: string, options: WaitForOptions = {}): Promise<Task> {
  const { timeoutMs, signal } = options ?? {};
  let pollMs: number;
  try {
    validateTaskId(id);
    if (timeoutMs !== undefined) intOption('timeoutMs', timeoutMs, null, 1, MAX_TIMER_MS);
    pollMs = intOption('pollMs', options?.pollMs, 1000, 10, MAX_TIMER_MS);
  } catch (e) {
    return Promise.reject(e);
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<Task>((resolve, reject) => {
    let done = false;
    let lastStatus: string | null = null;
    let reads = 0;
    let reading = false;
    let again = false;
    let poll: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    let unsubscribe: (() => void) | null = null;
    const onAbort = () => finish(signal!.reason);
    const finish = (error: unknown, task?: Task) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(deadline);
      offLocal();
      unsubscribe?.();
      signal?.removeEventListener('abort', onAbort);
      if (task) resolve(task);
      else reject(error);
    };
    const check = async (): Promise<void> => {
      if (done) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const t = await src.get(id);
          reads++;
          if (!t) return finish(new TaskNotFoundError(id));
          lastStatus = t.status;
          if (isTerminal(t.status)) return finish(null, t);
        } while (again && !done);
      } catch (e) {
        if (reads === 0) finish(e); // the first read says whether waiting makes sense; later ones are retried by the poll
      } finally {
        reading = false;
      }
    };
    const offLocal = src.events.on((e) => {
      if (e.taskId === id && isTerminal(e.to)) finish(null, e.task);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) deadline = setTimeout(() => finish(new WaitTimeoutError(id, timeoutMs, lastStatus)), timeoutMs);
    const subscribed = src.subscribe
      ? src
          .subscribe({
            onMessages: (ms) => {
              for (const m of ms) if (m.taskId === id && isTerminal(m.to)) return void check();
            },
            onGap: () => void check(),
          })
          .then(
            (off) => (done ? off() : (unsubscribe = off)),
            () => undefined, // no cross-process events: the polls still see the end
          )
      : Promise.resolve();
    // subscribe first, then read: a transition between the two is seen by one or the other
    void subscribed.then(() => {
      if (done) return;
      poll = setInterval(() => void check(), pollMs);
      void check();
    });
  });
}
