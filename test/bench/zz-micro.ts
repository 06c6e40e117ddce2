import { MemoryTaskStore, type NewTask } from 'nestjs-priority-queue';
import { randomUUID } from 'node:crypto';
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system); };
async function main() {
  const N = Number(process.env.N ?? 200_000);
  const R = Number(process.env.R ?? 4);
  const best: Record<string, number> = {};
  for (let rep = 0; rep < R; rep++) {
    const news: NewTask[] = Array.from({ length: N }, (_, i) => ({ id: randomUUID(), idempotencyKey: null, type: 'bench', payload: { n: i, url: 'https://example.test/job' }, priority: (i * 7919) % 2001 - 1000, providerKey: 'p', accountId: `acc-${(i * 31) % 1000}`, tenantId: null, concurrencyKey: null, delayMs: 0, timeoutMs: null, maxAttempts: 5, idempotent: true }));
    (globalThis as any).gc?.();
    const store = new MemoryTaskStore();
    let c0 = cpu();
    for (let i = 0; i < N; i += 10000) await store.create(news.slice(i, i + 10000));
    const create = (cpu() - c0) / N;
    let n = 0, claimT = 0, compT = 0;
    while (n < N) {
      c0 = cpu();
      const c = await store.claimSubmissions({ owner: 'w', limit: 64, leaseMs: 30000 });
      const c1 = cpu();
      for (const t of c.claimed) await store.complete({ id: t.id, leaseId: t.leaseId!, version: t.version }, { status: 'SUCCEEDED' as any });
      claimT += c1 - c0; compT += cpu() - c1;
      n += c.claimed.length; if (!c.claimed.length) break;
    }
    const r = { create, claim: claimT / N, complete: compT / N };
    for (const [k, v] of Object.entries(r)) best[k] = Math.min(best[k] ?? Infinity, v);
  }
  console.log(Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(3)}µs`).join('  '));
}
main();
