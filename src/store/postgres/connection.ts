import pg from 'pg';

/**
 * Whether `error` is the server's error response to a statement, after which the connection is idle
 * and may be reused: severity `ERROR` (the statement rolled back; nothing else happened to the
 * session). `FATAL` and `PANIC` responses are `pg.DatabaseError`s too, but the server closes the
 * connection after sending them (`pg_terminate_backend`, a shutdown), and one kept would fail the
 * next statement sent on it. (The severity is in the server's `lc_messages` language: under another
 * language every error response discards its connection, which costs a reconnect, nothing more.)
 */
export function isStatementError(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.severity === 'ERROR';
}

/**
 * Runs `work` on one pooled connection with no transaction open, so each statement commits on its own.
 * The connection goes back to the pool for reuse, unless it reported an error or `work` threw: then its
 * state is unknown and it is discarded, as `pool.query` does — except for a thrown error `isClean`
 * accepts, one known to leave the connection idle (such as a server's error response to a single
 * autocommit statement).
 */
export async function withConnection<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  isClean: (error: unknown) => boolean = () => false,
): Promise<T> {
  const client = await pool.connect();
  let discard: Error | undefined;
  // A checked-out client has no pool listener: a connection error would otherwise crash the process.
  const onConnectionError = (error: Error): void => {
    discard = error;
  };
  client.on('error', onConnectionError);
  try {
    return await work(client);
  } catch (error) {
    if (!isClean(error)) discard ??= error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.removeListener('error', onConnectionError);
    client.release(discard);
  }
}
