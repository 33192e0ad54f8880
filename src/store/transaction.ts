import type pg from 'pg';

/**
 * Runs `work` in one transaction on a dedicated connection: BEGIN, then COMMIT if `work` resolves,
 * ROLLBACK if it throws. Whatever `work` threw is what the caller sees, even when the ROLLBACK fails
 * too; a failed COMMIT throws the COMMIT's error (PostgreSQL has rolled back by then).
 *
 * The connection goes back to the pool in every case. When BEGIN, COMMIT or ROLLBACK failed, or the
 * connection reported an error, its state is unknown (mid-transaction or dead), so it is destroyed
 * instead of reused.
 */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let discard: Error | undefined;
  // A checked-out client has no pool listener: a connection error arriving between two queries
  // would otherwise be an unhandled 'error' event and crash the process.
  const onConnectionError = (error: Error): void => {
    discard = error;
  };
  client.on('error', onConnectionError);
  try {
    await runStatement(client, 'BEGIN', (error) => (discard = error));
    let result: T;
    try {
      result = await work(client);
    } catch (error) {
      discard = (await rollbackQuietly(client)) ?? discard;
      throw error;
    }
    await runStatement(client, 'COMMIT', (error) => (discard = error));
    return result;
  } finally {
    client.removeListener('error', onConnectionError);
    client.release(discard);
  }
}

async function runStatement(client: pg.PoolClient, text: string, onFailure: (error: Error) => void): Promise<void> {
  try {
    await client.query(text);
  } catch (error) {
    onFailure(asError(error));
    throw error;
  }
}

/** Returns the ROLLBACK's own error instead of throwing it, so it cannot mask the original one. */
async function rollbackQuietly(client: pg.PoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (error) {
    return asError(error);
  }
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
