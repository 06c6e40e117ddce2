import { isTerminal, type TaskEvent, type TaskEvents, type TaskStore } from '../../../libs/priority-queue/src/core';

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves when `signal` fires. */
export function abortOf(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve())));
}

/** Resolves with the event of the task's terminal transition. */
export function ended(events: TaskEvents, id: string): Promise<TaskEvent> {
  return new Promise((resolve) => events.on((e) => e.taskId === id && isTerminal(e.to) && resolve(e)));
}

/**
 * Watches a real store's renewals (the real call runs): `renewedAfter` resolves at the first
 * renewal that succeeds once `after()` is true; `refused` lists every rejection.
 */
export function watchRenewals(store: TaskStore, after: () => boolean): { refused: unknown[]; renewedAfter: Promise<void> } {
  const refused: unknown[] = [];
  let renewed!: () => void;
  const renewedAfter = new Promise<void>((r) => (renewed = r));
  const renew = store.renewLease.bind(store);
  store.renewLease = async (fence, leaseMs) => {
    try {
      const t = await renew(fence, leaseMs);
      if (after()) renewed();
      return t;
    } catch (e) {
      refused.push(e);
      throw e;
    }
  };
  return { refused, renewedAfter };
}
