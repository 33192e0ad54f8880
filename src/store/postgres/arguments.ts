import { InputInvalidError } from '../../core/errors/index.js';

/**
 * Checks on the scalar arguments of store operations, made before any database work so a bad call
 * fails with a typed `input.invalid` instead of a driver error half-way through a transaction.
 */

/** Longest lease the store grants: the largest delay a Node timer (the heartbeat) can wait, about 24.8 days. */
const MAX_TTL_MS = 2_147_483_647;

/** A per-session sequence number (input seq or message seq): a positive safe integer. */
export function assertSeq(value: unknown, what = 'seq'): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw new InputInvalidError(`${what} must be a positive integer`, { details: { received: String(value) } });
}

/** A fencing token as handed out by `acquireLease`: a positive safe integer. */
export function assertLeaseToken(value: unknown): number {
  return assertSeq(value, 'lease token');
}

/** A lease length in milliseconds, from 1 to {@link MAX_TTL_MS}. */
export function assertTtlMs(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_TTL_MS) return value;
  throw new InputInvalidError(`ttlMs must be an integer from 1 to ${MAX_TTL_MS} (milliseconds)`, {
    details: { received: String(value) },
  });
}

/** An optional flag: a boolean, or undefined for false. */
export function assertFlag(value: unknown, what: string): boolean {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  throw new InputInvalidError(`${what} must be a boolean`, { details: { received: String(value) } });
}

/** A non-empty string of at most `max` characters. */
export function assertText(value: unknown, what: string, max: number): string {
  if (typeof value === 'string' && value.length > 0 && value.length <= max) return value;
  throw new InputInvalidError(`${what} must be a string of 1 to ${max} characters`);
}

/** A plain JSON-style object (not an array, a class instance or null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
