import { Client } from 'pg';

/** Runs statements on a short-lived connection (setup and cleanup only, never in a timed phase). */
export async function withPg<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
