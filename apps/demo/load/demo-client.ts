export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A small JSON client of the running demo (Node's fetch). */
export class DemoClient {
  constructor(
    readonly baseUrl: string,
    private readonly adminKey: string,
  ) {}

  async asTenant<T>(apiKey: string, method: string, path: string, body?: unknown): Promise<T> {
    return this.call<T>(method, path, { 'x-api-key': apiKey }, body);
  }

  async asAdmin<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.call<T>(method, path, { 'x-admin-key': this.adminKey }, body);
  }

  /** Resolves once the demo answers, or throws after `timeoutMs`. */
  async waitUntilUp(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.asAdmin('GET', '/admin/queue/stats');
        return;
      } catch (e) {
        if (e instanceof HttpError && e.status === 401) throw new Error('the demo refused DEMO_ADMIN_KEY: use the key it printed at start-up (or was started with)');
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private async call<T>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new HttpError(res.status, `${method} ${path}: HTTP ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
