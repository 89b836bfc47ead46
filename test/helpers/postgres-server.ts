import pg from 'pg';
import { POSTGRES_URL } from './gateway.ts';

/** The test server's URL with another database (fault tests make a database of their own, then break it). */
export const serverUrl = (database: string): string => {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
};

/** Runs `action` on a connection of its own to `database` (by default the server's `postgres`), closed afterwards. */
export async function onServer<T>(action: (client: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl(database) });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

/** Ends every connection to the database but the caller's own and `keep` (a backend pid), as a crash or restart would. */
export const terminateBackends = (database: string, keep?: number) =>
  onServer((client) =>
    client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and pid <> $2', [database, keep ?? 0]),
  );
