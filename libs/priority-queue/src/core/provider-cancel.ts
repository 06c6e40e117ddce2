import type { TaskTypeRegistry } from './registry';
import { TaskStatus, type Task, type Transition } from './task';

/**
 * Asks the provider to drop a job it accepted, through the cancel hook of the task's handler
 * (when this process has the handler and the handler has the hook); a hook's error goes to
 * onError. Used for cancel requests, for tasks that time out under a worker's lease, and by the
 * worker's recovery sweep for the provider tasks it times out.
 */
export async function cancelAtProvider(
  registry: TaskTypeRegistry,
  task: Task,
  externalId: string | null,
  onError: (error: unknown) => void,
  signal: AbortSignal = new AbortController().signal,
): Promise<void> {
  const handler = registry.get(task.type)?.handler;
  if (!handler?.cancel || externalId === null) return;
  try {
    await handler.cancel({ task, payload: task.payload, signal, externalId });
  } catch (e) {
    onError(e);
  }
}

/**
 * The provider cancels a worker's recovery sweep owes (DESIGN §4): a provider task the sweep
 * timed out from SUBMITTED / RUNNING (its deadline passed between polls) is cancelled through
 * its handler's cancel hook by the worker whose sweep made the transition. Only that sweep
 * reports the transition, so the hook is called once (not at all when this process has no
 * handler for the type, or stops before the call).
 */
export class SweepCancels {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly registry: TaskTypeRegistry,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Hooks not returned yet. */
  get size(): number {
    return this.pending.size;
  }

  /** Starts the cancel hook of every provider task in `transitions` timed out from SUBMITTED / RUNNING. */
  afterSweep(transitions: readonly Transition[]): void {
    for (const { task, from, to } of transitions) {
      if (to !== TaskStatus.TIMED_OUT || (from !== TaskStatus.SUBMITTED && from !== TaskStatus.RUNNING)) continue;
      const hook = cancelAtProvider(this.registry, task, task.externalId, this.onError);
      this.pending.add(hook);
      void hook.finally(() => this.pending.delete(hook));
    }
  }

  /** Resolves when the hooks started so far have returned. */
  async idle(): Promise<void> {
    await Promise.all(this.pending);
  }
}
