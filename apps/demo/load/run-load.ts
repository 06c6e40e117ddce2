/**
 * npm run demo:load — drives the running demo (npm start) over HTTP:
 * 500 archive documents (100 ENTERPRISE on vendor A, 400 PRO/FREE on vendor B), then 20
 * interactive documents of an ENTERPRISE tenant and 20 of a FREE tenant, and one incident
 * recovery. Prints the wait per kind and plan, what each vendor saw, and checks that the
 * incident and the ENTERPRISE jobs start before any archive job still queued and that no
 * vendor limit is exceeded. Exits 1 when a check fails.
 *
 * Env: DEMO_URL (default http://127.0.0.1:3000), DEMO_ADMIN_KEY (required: the key the demo was
 * started with, or the one it generated and printed at start-up),
 * LOAD_ENTERPRISE_KEY / LOAD_PRO_KEY / LOAD_FREE_KEY (default acme-key / globex-key / initech-key),
 * LOAD_TIMEOUT_S (default 600).
 */
import { DemoClient } from './demo-client';
import { checkStartsBeforeQueuedArchive, checkVendorLimits } from './load-checks';
import { checksList, startOrder, vendorTable, waitTable } from './load-report';
import type { CheckResult, TimelineEntry, VendorStats } from './load-types';

const env = process.env;
if (!env.DEMO_ADMIN_KEY) {
  console.error('set DEMO_ADMIN_KEY: the admin key the demo printed at start-up ("admin routes: x-admin-key: ..."), or start both with the same DEMO_ADMIN_KEY');
  process.exit(2);
}
const client = new DemoClient(env.DEMO_URL ?? 'http://127.0.0.1:3000', env.DEMO_ADMIN_KEY);
const KEYS = {
  enterprise: env.LOAD_ENTERPRISE_KEY ?? 'acme-key',
  pro: env.LOAD_PRO_KEY ?? 'globex-key',
  free: env.LOAD_FREE_KEY ?? 'initech-key',
};
const ARCHIVE = { enterprise: 100, pro: 200, free: 200 };
const INTERACTIVE_PER_TENANT = 20;
const timeoutMs = Number(env.LOAD_TIMEOUT_S ?? 600) * 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const docs = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i + 1}.pdf`, pages: 1 + (i % 4) }));

async function main(): Promise<number> {
  await client.waitUntilUp(15_000).catch((e: unknown) => {
    if (e instanceof Error && e.message.includes('DEMO_ADMIN_KEY')) throw e;
    throw new Error(`the demo does not answer at ${client.baseUrl}: start it first (npm start)`);
  });
  await client.asAdmin('POST', '/admin/vendors/reset-stats');
  console.log(`watch the queue drain: ${client.baseUrl}/dashboard/ (any user name, the admin key as the password)`);
  const run = Date.now().toString(36);
  const ours = new Set<string>();
  const t0 = Date.now();

  for (const [plan, n] of Object.entries(ARCHIVE) as Array<[keyof typeof KEYS, number]>) {
    const res = await client.asTenant<{ taskIds: string[] }>(KEYS[plan], 'POST', '/batches', { documents: docs(`archive-${run}-${plan}`, n) });
    res.taskIds.forEach((id) => ours.add(id));
  }
  console.log(`queued ${ours.size} archive documents in ${Date.now() - t0} ms`);

  // users upload one document every 50 ms, ENTERPRISE and FREE in turn
  for (let i = 0; i < INTERACTIVE_PER_TENANT; i++) {
    for (const key of [KEYS.enterprise, KEYS.free]) {
      const t = await client.asTenant<{ id: string }>(key, 'POST', '/documents', { name: `upload-${run}-${i + 1}.pdf`, pages: 2 });
      ours.add(t.id);
      await sleep(25);
    }
    if (i === INTERACTIVE_PER_TENANT / 2) {
      const incident = await client.asTenant<{ id: string }>(KEYS.free, 'POST', `/incidents/inc-${run}/recover`, { records: ['invoice-17', 'invoice-18'] });
      ours.add(incident.id);
      console.log('incident recovery requested');
    }
  }
  console.log(`queued ${ours.size} tasks in total; waiting for them to finish...`);

  const deadline = Date.now() + timeoutMs;
  let mine: TimelineEntry[] = [];
  let polls = 0;
  for (;;) {
    mine = (await client.asAdmin<TimelineEntry[]>('GET', '/admin/timeline')).filter((e) => ours.has(e.taskId));
    const done = mine.filter((e) => e.finishedAt !== null).length;
    const progress = `  ${done}/${ours.size} finished after ${((Date.now() - t0) / 1000).toFixed(0)} s`;
    if (process.stdout.isTTY) process.stdout.write(`\r${progress}   `);
    else if (++polls % 5 === 0) console.log(progress);
    if (done === ours.size) break;
    if (Date.now() > deadline) {
      console.log();
      throw new Error(`only ${done}/${ours.size} tasks finished within ${timeoutMs / 1000} s`);
    }
    await sleep(1000);
  }
  if (process.stdout.isTTY) console.log();
  console.log(`all ${ours.size} tasks finished in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

  const { vendors } = await client.asAdmin<{ vendors: VendorStats[] }>('GET', '/admin/vendors');
  const archive = mine.filter((e) => e.kind === 'BATCH_ARCHIVE');
  const incident = mine.filter((e) => e.kind === 'INCIDENT_RECOVERY');
  const enterprise = mine.filter((e) => e.kind === 'INTERACTIVE' && e.plan === 'ENTERPRISE');
  const free = mine.filter((e) => e.kind === 'INTERACTIVE' && e.plan === 'FREE');
  const failed = mine.filter((e) => e.status !== 'SUCCEEDED');
  const checks: CheckResult[] = [
    checkStartsBeforeQueuedArchive('incident recovery starts before any queued archive job', incident, archive),
    checkStartsBeforeQueuedArchive('ENTERPRISE interactive jobs start before any queued archive job', enterprise, archive),
    ...checkVendorLimits(vendors),
    {
      name: 'every task succeeded',
      ok: failed.length === 0,
      detail: failed.length ? failed.slice(0, 5).map((e) => `${e.taskId} ${e.status}`).join(', ') : `${mine.length} SUCCEEDED`,
    },
  ];
  const info = checkStartsBeforeQueuedArchive('(info) FREE interactive jobs start before any queued archive job', free, archive);

  console.log('Wait from submit to first vendor call, per kind and plan:\n');
  console.log(waitTable(mine));
  console.log('\nArchive jobs in start order, per vendor (E = ENTERPRISE, P = PRO, F = FREE):\n');
  console.log(startOrder(mine));
  console.log('\nWhat the simulated vendors saw:\n');
  console.log(vendorTable(vendors));
  console.log('\nChecks:\n');
  console.log(checksList([...checks, info]));
  const ok = checks.every((c) => c.ok);
  console.log(`\n${ok ? 'ALL CHECKS PASSED' : 'SOME CHECKS FAILED'}`);
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
