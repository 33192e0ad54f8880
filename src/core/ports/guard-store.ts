import { InfrastructureError, isLoopfleetError, thrownText } from '../errors/index.js';
import type { LoopStore } from './loop-store.js';

/**
 * The store as the loop and the client see it: any failure that is not one of loopfleet's typed
 * errors (a dropped connection, an exhausted pool, a failed COMMIT, a schema that was never migrated)
 * becomes a retryable `system.infrastructure` error that names the operation and the database's own
 * words, never the SQL of the statement (the query builder puts the whole statement and its
 * parameters in its message). The loop does not turn those into a `failed` input — the step did not
 * happen, so the run stops and the input stays `running` for the next attempt (BullMQ retry or the
 * sweeper) to continue, instead of a transient database fault failing a user's input for good.
 */
export function guardStore<T extends LoopStore>(store: T): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const operation = String(property);
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (error) {
          throw storeFailure(operation, error);
        }
      };
    },
  });
}

/** One store call outside a guarded store (timers): its failure as {@link storeFailure} makes it. */
export async function guardedStoreCall<T>(operation: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw storeFailure(operation, error);
  }
}

/** A typed error unchanged; anything else as `system.infrastructure`, with the cause kept. */
export function storeFailure(operation: string, error: unknown): Error {
  if (isLoopfleetError(error)) return error;
  const root = databaseCause(error);
  const code = errorCode(root);
  // A five-character code is Postgres's SQLSTATE (42P01: the schema was never migrated); a longer
  // one a socket's (ECONNREFUSED), which Node's connection errors may carry with an empty message.
  const sqlState = code !== null && /^[0-9A-Z]{5}$/.test(code) ? code : null;
  const words = (root instanceof Error && root.message === '' && code !== null ? `${root.name} ${code}` : thrownText(root)) ?? 'unknown error';
  const message = `store ${operation} failed: ${words}${sqlState !== null ? ` (SQLSTATE ${sqlState})` : ''}`;
  return new InfrastructureError(message, { cause: error, details: sqlState === null ? { operation } : { operation, sqlState } });
}

/**
 * What the database or the network said: the query builder wraps a driver error in one of its own
 * (`Failed query: <sql> params: <values>`, carrying `query` and the driver's error as `cause`), whose
 * message would print the statement and the user's data. Unwrapped as far as such wrappers go; one
 * without a cause says only that the statement failed.
 */
function databaseCause(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 5 && isQueryWrapper(current); depth += 1) {
    if (current.cause === undefined) return new Error('the statement failed');
    current = current.cause;
  }
  return isQueryWrapper(current) ? new Error('the statement failed') : current;
}

function isQueryWrapper(value: unknown): value is Error {
  try {
    return value instanceof Error && 'query' in value;
  } catch {
    return false;
  }
}

function errorCode(value: unknown): string | null {
  try {
    const code = typeof value === 'object' && value !== null ? (value as { code?: unknown }).code : undefined;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}
