import type { SchedulerRegistry } from '@nestjs/schedule';
import type { TimerHost } from '../core/timers';

/** Worker timers kept in @nestjs/schedule's SchedulerRegistry, next to the app's own. */
export class SchedulerTimerHost implements TimerHost {
  constructor(private readonly registry: SchedulerRegistry) {}

  addInterval(name: string, fn: () => void, ms: number): void {
    this.remove(name);
    this.registry.addInterval(name, setInterval(fn, ms));
  }

  addTimeout(name: string, fn: () => void, ms: number): void {
    this.remove(name);
    const ref = setTimeout(() => {
      if (this.registry.doesExist('timeout', name)) this.registry.deleteTimeout(name);
      fn();
    }, ms);
    this.registry.addTimeout(name, ref);
  }

  remove(name: string): void {
    if (this.registry.doesExist('interval', name)) this.registry.deleteInterval(name);
    if (this.registry.doesExist('timeout', name)) this.registry.deleteTimeout(name);
  }
}
