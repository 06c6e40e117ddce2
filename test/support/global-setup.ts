import { ensureBinary } from './servers/common';

/**
 * Runs once before the whole jest run: makes sure the real servers the store suites start are
 * installed, and Chromium for the dashboard's browser test (installing the Debian packages as
 * root, or failing with the command to run), so a fresh machine pays the install here and not
 * inside a test's time limit.
 */
export default function globalSetup(): void {
  ensureBinary(['redis-server', '/usr/bin/redis-server'], 'redis-server');
  ensureBinary(['redis-cli', '/usr/bin/redis-cli'], 'redis-tools'); // redis-cli --cluster create
  ensureBinary(['/usr/lib/postgresql/15/bin/postgres'], 'postgresql');
  ensureBinary(['mariadbd', '/usr/sbin/mariadbd', 'mysqld', '/usr/sbin/mysqld'], 'mariadb-server');
  ensureBinary(['chromium', '/usr/bin/chromium'], 'chromium'); // the dashboard's browser test
}
