/**
 * Counts requests over a sliding window, the way a vendor's gateway enforces "N per second".
 * `windowMs` is 1000 minus the network jitter the vendor forgives.
 */
export class SubmitRateMeter {
  private readonly arrivals: number[] = [];
  private head = 0;
  private peak = 0;

  constructor(private readonly windowMs: number) {}

  /** Records an arrival at `now` and returns how many arrived in the window ending at it. */
  record(now: number): number {
    this.arrivals.push(now);
    while (this.arrivals[this.head] <= now - this.windowMs) this.head++;
    if (this.head > 1024) {
      this.arrivals.splice(0, this.head);
      this.head = 0;
    }
    const inWindow = this.arrivals.length - this.head;
    if (inWindow > this.peak) this.peak = inWindow;
    return inWindow;
  }

  /** The most arrivals ever seen in one window. */
  get peakPerWindow(): number {
    return this.peak;
  }
}
