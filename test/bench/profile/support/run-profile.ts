/**
 * Runs a profile's `main` and ends the process: exit code 0 when it resolves, 1 with the error
 * printed when it rejects. The exit is explicit because what a profile opened (pools, workers'
 * timers, servers' sockets) may keep Node alive after the figures are printed.
 */
export function runProfile(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
