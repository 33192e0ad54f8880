import { InputInvalidError } from '../core/errors/index.js';

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

/**
 * Serialises a value for a `jsonb` parameter. Refuses what PostgreSQL or JSON cannot hold: values
 * `JSON.stringify` throws on (BigInt, cycles), the NUL character and unpaired UTF-16 surrogates, which
 * `jsonb` rejects.
 */
export function toJsonText(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new InputInvalidError(`${what} is not serialisable as JSON`, { cause: error });
  }
  if (text === undefined) throw new InputInvalidError(`${what} is not serialisable as JSON`);
  // The plain searches first: nearly every text has neither, and the regexes need not run.
  if (text.includes('\\u0000') && ESCAPED_NUL.test(text)) throw new InputInvalidError(`${what} contains a NUL character (\\u0000), which PostgreSQL cannot store`);
  if (text.includes('\\ud') && ESCAPED_LONE_SURROGATE.test(text)) {
    throw new InputInvalidError(`${what} contains an unpaired UTF-16 surrogate (half of a character), which PostgreSQL cannot store`);
  }
  return text;
}

/** `\u0000` as JSON.stringify writes it, not preceded by an escaping backslash. */
const ESCAPED_NUL = /(?<!\\)(?:\\\\)*\\u0000/;

/** A lone surrogate as JSON.stringify writes it (`\ud800`; a well-formed pair is written as itself). */
const ESCAPED_LONE_SURROGATE = /(?<!\\)(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/;
