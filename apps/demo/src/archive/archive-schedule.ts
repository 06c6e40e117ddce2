/**
 * When the nightly archive runs: DEMO_ARCHIVE_CRON (a cron expression), default 02:00 every
 * night. Read when the module loads, because @Cron takes its expression at decoration time.
 */
export const ARCHIVE_CRON = process.env.DEMO_ARCHIVE_CRON ?? '0 2 * * *';
