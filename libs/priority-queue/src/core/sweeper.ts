import type { TaskEvents } from './events';
import { SweepCancels } from './provider-cancel';
import type { TaskTypeRegistry } from './registry';
import type { TaskStore } from './task-store.port';
import type { Transition } from './task';

/** Tasks recovered per sweep at most. */
const SWEEP_LIMIT = 1000;

export interface SweeperOptions {
  store: TaskStore;
  registry: TaskTypeRegistry;
  events: TaskEvents;
  owner: string;
  /** Sweep period; also the length of the sweep lease (store.sweepExpired). */
  periodMs: number;
  onError: (error: unknown) => void;
  /** Refreshes the worker's offset to the store clock; `always` false = only when it is old. */
  syncClock: (always: boolean) => Promise<void>;
  /** Called when a sweep changed something (tasks back in the queue, polls freed). */
  changed: () => void;
}

/**
 * A worker's recovery sweep (DESIGN §4: expired leases, passed deadlines). On its timer it goes
 * through the store's sweep lease when the store has one (store.sweepExpired): the workers of
 * a queue, in every process, then sweep once per period between them; a lease taken by a
 * worker that died lapses after one period. Without the lease, every worker sweeps.
 * Provider cancel hooks of the tasks a sweep times out between polls are this sweeper's
 * (SweepCancels).
 */
export class Sweeper {
  private readonly cancels: SweepCancels;
  private running = false;

  constructor(private readonly o: SweeperOptions) {
    this.cancels = new SweepCancels(o.registry, o.onError);
  }

  /** A sweep is in progress. */
  get busy(): boolean {
    return this.running;
  }

  /** Cancel hooks not returned yet. */
  get pendingCancels(): number {
    return this.cancels.size;
  }

  cancelsIdle(): Promise<void> {
    return this.cancels.idle();
  }

  /**
   * One sweep. `leased`: through the store's sweep lease (the timer's way); otherwise
   * recoverExpired at once, and the store clock is read first. Returns the transitions made.
   */
  async run(leased: boolean): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    try {
      const { store } = this.o;
      await this.o.syncClock(!leased);
      let transitions: Transition[] | null;
      if (leased && store.sweepExpired) {
        transitions = await store.sweepExpired({ owner: this.o.owner, leaseMs: this.o.periodMs, limit: SWEEP_LIMIT });
      } else {
        transitions = await store.recoverExpired(SWEEP_LIMIT);
      }
      if (!transitions) return 0;
      this.o.events.emitTransitions(transitions);
      this.cancels.afterSweep(transitions);
      if (transitions.length) this.o.changed();
      return transitions.length;
    } catch (e) {
      this.o.onError(e);
      return 0;
    } finally {
      this.running = false;
    }
  }
}
