import { SessionInvalidIdError } from './errors/index.js';

/**
 * A session id becomes part of Redis keys and log lines, so it is restricted to a safe alphabet:
 * 1–128 characters of `[A-Za-z0-9_.:-]` (DESIGN.md §5), not ending in one of
 * {@link RESERVED_SESSION_ID_SUFFIXES}.
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Suffixes of the keys a session has in Redis next to its stream `<queue>:events:<id>` (its seq
 * counter, finished set and deletion fence: `src/producer/fleet-keys.ts`). An id ending in one of
 * them (`a:seq`) would name another session's key (`a`'s counter), so such ids are refused.
 */
export const RESERVED_SESSION_ID_SUFFIXES = [':seq', ':finished', ':deleted'] as const;

export function isValidSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID_PATTERN.test(value) && !hasReservedSuffix(value);
}

function hasReservedSuffix(value: string): boolean {
  return RESERVED_SESSION_ID_SUFFIXES.some((suffix) => value.endsWith(suffix));
}

/** Returns the id unchanged, or throws `session.invalid_id` saying what was wrong. */
export function assertSessionId(value: unknown): string {
  if (isValidSessionId(value)) return value;
  throw new SessionInvalidIdError(describeInvalid(value), { details: { received: preview(value) } });
}

function describeInvalid(value: unknown): string {
  if (typeof value !== 'string') return `session id must be a string, got ${value === null ? 'null' : typeof value}`;
  if (value.length === 0) return 'session id must not be empty';
  if (value.length > 128) return `session id must be at most 128 characters, got ${value.length}`;
  if (SESSION_ID_PATTERN.test(value)) return `session id must not end in ${RESERVED_SESSION_ID_SUFFIXES.map((suffix) => `"${suffix}"`).join(', ')}: those name the Redis keys next to a session's stream`;
  return 'session id may contain only letters, digits, "_", ".", ":" and "-"';
}

function preview(value: unknown): string {
  // String() throws for an object without a primitive form (Object.create(null)): describe it instead.
  const text = typeof value === 'string' ? value : value !== null && typeof value === 'object' ? Object.prototype.toString.call(value) : String(value);
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
