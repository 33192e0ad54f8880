/** Node's codes for a network connection that failed, was refused, reset or timed out. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** What pg, ioredis and the event publisher say when a connection they held goes away or cannot be had (no code). */
const CLOSED_CONNECTION =
  /^(Connection terminated|Connection is closed|the connection closed|Client has encountered a connection error|Stream isn't writeable|Reached the max retries per request limit|timeout exceeded when trying to connect)/;

const MAX_DEPTH = 5;

/**
 * Whether an error, or one of its causes, is a lost or refused connection to Redis or Postgres. Its
 * stack is not logged: it points into the driver, not at a bug, and an outage would print one for
 * every failed call.
 */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH || typeof error !== 'object' || error === null) return false;
  const fields = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof fields.code === 'string' && NETWORK_CODES.has(fields.code)) return true;
  if (typeof fields.message === 'string' && CLOSED_CONNECTION.test(fields.message)) return true;
  return isConnectionFailure(fields.cause, depth + 1);
}

/** A serialised error without its `stack` fields, its causes' included. */
export function withoutStacks(serialized: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH || typeof serialized !== 'object' || serialized === null || Array.isArray(serialized)) return serialized;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(serialized)) {
    if (key !== 'stack') copy[key] = withoutStacks(value, depth + 1);
  }
  return copy;
}
