import { PriorityQueueDashboardModule } from 'nestjs-priority-queue/dashboard';
import { expectJson, type CompatStep } from '../step.js';

/**
 * The dashboard from the installed package: its page, script and stylesheet are files the
 * tarball ships (read from disk at run time), and its API lists the app's queues.
 */
export const dashboard: CompatStep = {
  name: 'dashboard page and API',
  imports: [PriorityQueueDashboardModule.forRoot({ path: 'queues-ui', readOnly: true, unsafeNoAuth: true })],
  async run(_app, { baseUrl }) {
    for (const [file, type] of [['', 'text/html'], ['app.js', 'javascript'], ['app.css', 'text/css']] as const) {
      const res = await fetch(`${baseUrl}/queues-ui/${file}`);
      const body = await res.text();
      expectJson([res.status, (res.headers.get('content-type') ?? '').includes(type), body.length > 200], [200, true, true], `GET /queues-ui/${file}`);
    }
    const api = (await (await fetch(`${baseUrl}/queues-ui/api/queues`)).json()) as { queues: Array<{ name: string }> };
    expectJson(api.queues.map((q) => q.name).includes('default'), true, 'the dashboard API lists the default queue');
  },
};
